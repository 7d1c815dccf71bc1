/* t_preflight.c - the preflight report and link results as text (lib/
 * preflight.c), what the probes find on this machine, and a TCP round
 * trip through the echo listener (lib/observe/preflight_probe.c). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "preflight.h"
#include "tap.h"

static void roundtrip(void)
{
    struct pf_report r = { .node = 3, .gpus = 4, .mem_free_mb = 123456 }, d;
    struct err err = { "" };
    char *text = NULL;
    size_t len = 0;

    snprintf(r.host, PF_STR, "node3");
    snprintf(r.prog, PF_STR, "/usr/bin/python3");
    snprintf(r.import_err, PF_STR, "No module named 'torch'\nsecond line");
    snprintf(r.addr, PF_STR, "[fe80::1]:4000");
    ok(pf_encode(&r, &text, &len) == 0 && len == strlen(text), "encoded");
    ok(strstr(text, "import_err=No module named 'torch'?second line\n") != NULL,
       "a newline inside a value becomes '?'");
    ok(pf_decode(text, len, &d, &err) == 0, "decoded");
    is_int(d.node, 3, "  node");
    is_int(d.gpus, 4, "  gpus");
    is_int(d.mem_free_mb, 123456, "  memory");
    is_str(d.prog, "/usr/bin/python3", "  program");
    is_str(d.addr, "[fe80::1]:4000", "  address");
    is_str(d.nccl, "", "  empty string stays empty");
    free(text);
}

static void bad(const char *text, const char *want, const char *what)
{
    struct pf_report r;
    struct err err = { "" };

    ok(pf_decode(text, strlen(text), &r, &err) < 0 && strstr(err.msg, want),
       what);
    if (!strstr(err.msg, want))
        printf("#   got '%s'\n", err.msg);
}

static void refused(void)
{
    char longer[PF_STR + 20];
    struct pf_report r;
    struct err err = { "" };

    bad("host=a\n", "no node", "no node: refused");
    bad("node=1\nnode=2\n", "node given twice", "a key twice: refused");
    bad("node=x\n", "node: not a number", "a node that is not a number");
    bad("node=1 \n", "not a number", "trailing blank in a number");
    bad("node=99999999999\n", "not a number", "a node out of range");
    bad("node=1\njunk\n", "without '='", "a line without '='");
    snprintf(longer, sizeof longer, "node=1\nhost=%0*d\n", PF_STR, 0);
    bad(longer, "host: too long", "a string longer than the field");
    ok(pf_decode("node=1\nfuture=x\n", 16, &r, &err) == 0 && r.node == 1 &&
       r.gpus == -1, "an unknown key is skipped, the rest stays unknown");
}

static void links(void)
{
    struct pf_link l[2] = { { 1, 250, "" }, { 2, -1, "cannot connect" } },
                   d[4];
    struct err err = { "" };
    char *text = NULL;
    size_t len = 0;
    int n = 0;

    ok(pf_links_encode(l, 2, &text, &len) == 0, "links encoded");
    ok(pf_links_decode(text, len, d, 4, 3, &n, &err) == 0 && n == 2,
       "links decoded");
    is_int(d[0].rtt_us, 250, "  round trip");
    is_str(d[1].err, "cannot connect", "  the failure's reason");
    ok(pf_links_decode(text, len, d, 4, 2, &n, &err) < 0,
       "a peer outside the plan is refused");
    ok(pf_links_decode(text, len, d, 1, 3, &n, &err) < 0 &&
       strstr(err.msg, "more than 1"), "more links than room: refused");
    ok(pf_links_decode("link=1 x \n", 10, d, 4, 3, &n, &err) < 0,
       "a round trip that is not a number: refused");
    free(text);
}

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

    pf_echo_serve(e->lfd, e->stop);
    return NULL;
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
    ok(pf_ping(addr, 30000, &rtt, &err) == 0 && rtt >= 0, "a round trip");
    ok(pf_ping(addr, 30000, &rtt, &err) == 0, "  and a second peer");
    eventfd_write(e.stop, 1);
    pthread_join(t, NULL);
    close(e.lfd);
    close(e.stop);
    ok(pf_ping(addr, 30000, &rtt, &err) < 0 &&
       strstr(err.msg, "cannot connect"), "nobody listens: cannot connect");
    ok(pf_listen("no.such.host", addr, sizeof addr, &err) < 0,
       "a name, not an address: refused");
}

int main(void)
{
    roundtrip();
    refused();
    links();
    probe();
    ping();
    return tap_done();
}
