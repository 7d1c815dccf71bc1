/* t_preflight_probe.c - what a node finds about itself before a job
 * (lib/observe/preflight_probe.c): the program in PATH or not runnable,
 * dlrun's version, memory, the host, Python's version and an import; and
 * TCP round trips through the echo listener, over IPv4 and IPv6. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "observe/preflight.h"
#include "util/clock.h"
#include "tap.h"

static void probe(void)
{
    struct pf_report r = { 0 };
    char *sh[] = { "sh", NULL }, *none[] = { "no-such-prog-dlrun", NULL };
    char *py[] = { "python3", NULL };

    pf_probe(&r, sh, NULL, 10000);
    ok(r.prog[0] == '/' && !r.prog_err[0], "sh is found in PATH");
    is_str(r.version, DLRUN_VERSION, "  dlrun's version");
    ok(r.mem_free_mb > 0, "  free memory from /proc/meminfo");
    ok(r.host[0] != '\0', "  the host name");
    memset(&r, 0, sizeof r);
    pf_probe(&r, none, NULL, 10000);
    ok(!r.prog[0] && strstr(r.prog_err, "not found"), "a missing program");
    if (access("/usr/bin/python3", X_OK) != 0) {
        ok(1, "# skip: no python3");
        return;
    }
    memset(&r, 0, sizeof r);
    pf_probe(&r, py, "os", 60000);
    ok(r.python[0] == '3' && !r.import_err[0], "python3: version, import os");
    memset(&r, 0, sizeof r);
    pf_probe(&r, py, "no_such_module_dlrun", 60000);
    ok(strstr(r.import_err, "No module named") != NULL,
       "  a missing module: Python's last line");
}

struct echo {
    int lfd, stop;
};

static void *echo_thread(void *arg)
{
    struct echo *e = arg;

    pf_echo_serve(e->lfd, e->stop, "k3y");
    return NULL;
}

/* A connection to addr (its fd), that sends text (may be NULL). */
static int connect_to(const char *addr, const char *text)
{
    struct sockaddr_in sa = { .sin_family = AF_INET };
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    sa.sin_port = htons((uint16_t)atoi(strchr(addr, ':') + 1));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        text && write(fd, text, strlen(text)) < 0)
        abort();
    return fd;
}

/* Another user's connections: 100 idle ones (more than the listener
 * serves at once), one that sent part of a key, one that trickles bytes:
 * the job's prober still gets its round trips at once; a wrong key gets
 * no echo. */
static void crowd(const char *addr)
{
    struct err err = { "" };
    int fds[102], n = 0;
    long rtt = -1, t0;
    char b;

    for (; n < 100; n++)
        fds[n] = connect_to(addr, NULL);
    fds[n++] = connect_to(addr, "k3");
    fds[n++] = connect_to(addr, "x");
    t0 = clock_ms();
    ok(pf_ping(addr, "k3y", 1000, &rtt, &err) == 0 && rtt >= 0,
       "100 idle connections and a trickling one: the prober's round trips");
    ok(clock_ms() - t0 < 1000, "  at once");
    ok(read(fds[101], &b, 1) == 0, "  the wrong byte's connection: closed");
    ok(pf_ping(addr, "other", 1000, &rtt, &err) < 0 &&
       strstr(err.msg, "no echo"), "a wrong key: no echo");
    while (n > 0)
        close(fds[--n]);
}

static void ping(void)
{
    struct echo e;
    struct err err = { "" };
    char addr[100];
    pthread_t t;
    long rtt = 0;

    e.lfd = pf_listen("127.0.0.1", addr, sizeof addr, &err);
    e.stop = eventfd(0, EFD_CLOEXEC);
    ok(e.lfd >= 0 && strncmp(addr, "127.0.0.1:", 10) == 0, "listening");
    pthread_create(&t, NULL, echo_thread, &e);
    ok(pf_ping(addr, "k3y", 30000, &rtt, &err) == 0 && rtt >= 0, "a round trip");
    ok(pf_ping(addr, "k3y", 30000, &rtt, &err) == 0, "  and a second peer");
    crowd(addr);
    eventfd_write(e.stop, 1);
    pthread_join(t, NULL);
    close(e.lfd);
    close(e.stop);
    ok(pf_ping(addr, "k3y", 30000, &rtt, &err) < 0 &&
       strstr(err.msg, "cannot connect"), "nobody listens: cannot connect");
    ok(pf_listen("no.such.host", addr, sizeof addr, &err) < 0,
       "a name, not an address: refused");
}

static void not_runnable(void)
{
    struct pf_report r = { 0 };
    char *plain[] = { "/etc/passwd", NULL }, *abs_sh[] = { "/bin/sh", NULL };

    pf_probe(&r, plain, NULL, 10000);
    ok(!r.prog[0] && strstr(r.prog_err, "/etc/passwd: not found or not "
                            "executable"), "a file without x bits: not runnable");
    memset(&r, 0, sizeof r);
    pf_probe(&r, abs_sh, "os", 10000);
    ok(!strcmp(r.prog, "/bin/sh") && !r.python[0] && !r.import_err[0] &&
       !strcmp(r.import_mod, "os"),
       "a path as given; not Python: no import tried, the module noted");
    memset(&r, 0, sizeof r);
    pf_probe(&r, NULL, NULL, 10000);
    ok(!r.prog[0] && !r.prog_err[0] && r.version[0],
       "no program asked: only the node's facts");
}

static void ping6(void)
{
    struct echo e;
    struct err err = { "" };
    char addr[100];
    pthread_t t;
    long rtt = -1;

    e.lfd = pf_listen("::1", addr, sizeof addr, &err);
    if (e.lfd < 0) {
        ok(1, "# skip: no IPv6 loopback here");
        return;
    }
    e.stop = eventfd(0, EFD_CLOEXEC);
    ok(strncmp(addr, "[::1]:", 6) == 0, "IPv6: the address in brackets");
    pthread_create(&t, NULL, echo_thread, &e);
    ok(pf_ping(addr, "k3y", 30000, &rtt, &err) == 0 && rtt >= 0, "a round trip over IPv6");
    eventfd_write(e.stop, 1);
    pthread_join(t, NULL);
    close(e.lfd);
    close(e.stop);
    ok(pf_ping("127.0.0.1", "k3y", 30000, &rtt, &err) < 0, "an address without a port");
}

int main(void)
{
    probe();
    not_runnable();
    ping();
    ping6();
    return tap_done();
}
