/* t_pmic.c - the simple PMI-1 client: words of a wire line, reply checks,
 * whether the environment names a PMI_FD or PMI_PORT, and the whole
 * agreement of rank 0's address and port over a socketpair whose other
 * end holds the server's replies (written before the client runs: every
 * request has one reply line), then what the client sent: rank 0 puts,
 * the others only get, finalize only when asked; PMI_PORT's handshake
 * over TCP to a thread that answers as mpiexec.hydra -pmi-port does; a
 * server that never answers: the wait ends at the limit, naming it. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "where/pmic.h"
#include "tap.h"

static void field(void)
{
    char v[16];

    ok(pmic_field("cmd=get_result rc=0 msg=success value=1.2.3.4:5", "value",
                  v, sizeof v) == 0 && strcmp(v, "1.2.3.4:5") == 0,
       "value= read from the last word");
    ok(pmic_field("cmd=my_kvsname  kvsname=kvs_1", "kvsname", v, sizeof v) == 0 &&
       strcmp(v, "kvs_1") == 0, "two spaces between words");
    ok(pmic_field("cmd=x rcx=1", "rc", v, sizeof v) < 0,
       "a key that only begins another's name is absent");
    ok(pmic_field("cmd=x value=0123456789abcdefXYZ", "value", v, sizeof v) < 0,
       "a value longer than the buffer is refused");
    ok(pmic_field("cmd=x rc=", "rc", v, sizeof v) == 0 && v[0] == '\0',
       "an empty value is empty");
    ok(pmic_field("", "cmd", v, sizeof v) < 0, "an empty line has no cmd");
}

static void reply(void)
{
    struct err err = { "" };

    ok(pmic_reply("cmd=barrier_out", "barrier_out", "barrier_in", &err) == 0,
       "the wanted cmd without rc is taken");
    ok(pmic_reply("cmd=put_result rc=0 msg=success", "put_result", "put",
                  &err) == 0, "rc=0 is taken");
    ok(pmic_reply("cmd=get_result rc=-1 msg=key_not_found", "get_result",
                  "cmd=get", &err) < 0 && strstr(err.msg, "refused cmd=get") &&
       strstr(err.msg, "rc=-1: key_not_found"),
       "rc=-1: refused, with the server's msg");
    ok(pmic_reply("cmd=finalize_ack", "barrier_out", "cmd=barrier_in", &err) < 0 &&
       strstr(err.msg, "not cmd=barrier_out"), "another cmd is refused");
}

static void server(void)
{
    char *none[] = { NULL };
    char *hydra[] = { "PMI_FD=6", "PMI_RANK=0", "PMI_SIZE=2", NULL };
    char *bad[] = { "PMI_FD=6x", "PMI_RANK=0", "PMI_SIZE=2", NULL };
    char *port[] = { "PMI_PORT=h:1", "PMI_RANK=0", "PMI_SIZE=2", NULL };
    char *port_id[] = { "PMI_PORT=h:1", "PMI_ID=3", NULL };
    char *norank[] = { "PMI_FD=6", NULL };

    is_int(pmic_server(none), 0, "no variables: no server");
    is_int(pmic_server(hydra), 1, "PMI_FD, PMI_RANK, PMI_SIZE: a server");
    is_int(pmic_server(bad), 0, "PMI_FD not a number: none");
    is_int(pmic_server(port), 0, "PMI_PORT without PMI_ID: none");
    is_int(pmic_server(port_id), 1, "PMI_PORT with PMI_ID: a server");
    is_int(pmic_fd_open(port_id), 1, "  reachable (by connecting)");
    is_int(pmic_server(norank), 0, "PMI_FD without a rank: none");
}

/* A PMI_FD is a channel only where its descriptor reached us as a socket
 * (a captured environment, or an outer launcher's fd closed on the way,
 * names one that is not). */
static void fd_open(void)
{
    char var[32], *env[] = { var, NULL };
    int sv[2], fd;

    if (!ok(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "a socketpair"))
        return;
    snprintf(var, sizeof var, "PMI_FD=%d", sv[0]);
    is_int(pmic_fd_open(env), 1, "PMI_FD an open socket: usable");
    close(sv[0]);
    close(sv[1]);
    is_int(pmic_fd_open(env), 0, "the same number closed: not");
    fd = open("/dev/null", O_RDONLY);
    snprintf(var, sizeof var, "PMI_FD=%d", fd);
    is_int(pmic_fd_open(env), 0, "an open file that is no socket: not");
    close(fd);
}

/* Run the client as rank over a socketpair whose server end holds
 * replies; what the client sent into sent (len bytes).  The client's
 * return value. */
static int agree(int rank, const char *replies, int finalize, char *addr,
                 size_t alen, int *port, char *sent, size_t len,
                 struct err *err)
{
    int sv[2], rc;
    char fdvar[32];
    char *envp[] = { fdvar, "PMI_RANK=0", "PMI_SIZE=2", NULL };
    ssize_t n;

    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        return -2;
    snprintf(fdvar, sizeof fdvar, "PMI_FD=%d", sv[0]);
    if (write(sv[1], replies, strlen(replies)) != (ssize_t)strlen(replies))
        return -2;
    shutdown(sv[1], SHUT_WR);   /* past the replies: EOF, not a hang */
    {
        struct pmic c;

        rc = pmic_open(envp, 5000, &c, err);
        if (rc == 0)
            rc = pmic_agree_master(&c, rank, addr, alen, port, err);
        if (rc == 0 && finalize)
            rc = pmic_finalize(&c, err);
        pmic_close(&c);
    }
    shutdown(sv[0], SHUT_WR);
    n = read(sv[1], sent, len - 1);
    sent[n > 0 ? n : 0] = '\0';
    close(sv[0]);
    close(sv[1]);
    return rc;
}

#define INIT "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n" \
             "cmd=my_kvsname kvsname=kvs_7\n"

static void agreement(void)
{
    char addr[64] = "10.0.0.1", sent[1024];
    int port = 23456;
    struct err err = { "" };

    is_int(agree(0, INIT "cmd=put_result rc=0 msg=success\ncmd=barrier_out\n"
                 "cmd=get_result rc=0 msg=success value=10.0.0.1:23456\n"
                 "cmd=finalize_ack\n", 1, addr, sizeof addr, &port, sent,
                 sizeof sent, &err), 0, "rank 0 agrees");
    is_str(sent, "cmd=init pmi_version=1 pmi_subversion=1\n"
           "cmd=get_my_kvsname\n"
           "cmd=put kvsname=kvs_7 key=dlrun.master value=10.0.0.1:23456\n"
           "cmd=barrier_in\ncmd=get kvsname=kvs_7 key=dlrun.master\n"
           "cmd=finalize\n", "  init, put, barrier, get, finalize");
    snprintf(addr, sizeof addr, "nothing");
    port = 0;
    is_int(agree(1, INIT "cmd=barrier_out\n"
                 "cmd=get_result rc=0 msg=success value=fe80::1:4242\n"
                 "cmd=barrier_out\n", 0, addr, sizeof addr, &port, sent,
                 sizeof sent, &err), 0, "rank 1 without finalize");
    is_str(addr, "fe80::1", "  rank 0's address (its last colon ends it)");
    is_int(port, 4242, "  and port");
    ok(!strstr(sent, "cmd=put") && !strstr(sent, "finalize"),
       "  no put, no finalize: the connection is left to the program");
    is_int(agree(1, INIT "cmd=barrier_out\ncmd=get_result rc=-1 "
                 "msg=key_dlrun.master_not_found\n", 1, addr, sizeof addr,
                 &port, sent, sizeof sent, &err), -1, "a failed get fails");
    ok(strstr(err.msg, "refused cmd=get key=dlrun.master (rc=-1: key_dlrun.master_not_found)") != NULL,
       "  naming the request and the server's msg");
    is_int(agree(1, INIT "cmd=barrier_out\n"
                 "cmd=get_result rc=0 value=host:99999\n", 1, addr,
                 sizeof addr, &port, sent, sizeof sent, &err), -1,
           "a port out of range fails");
    is_int(agree(1, "cmd=response_to_init rc=0\n", 1, addr, sizeof addr,
                 &port, sent, sizeof sent, &err), -1,
           "the server closing the fd fails");
    ok(strstr(err.msg, "closed PMI_FD") != NULL, "  saying so");
}

static void no_fd(void)
{
    char *envp[] = { NULL };
    struct pmic c;
    struct err err = { "" };

    ok(pmic_open(envp, 100, &c, &err) < 0 && strstr(err.msg, "PMI_FD") &&
       strstr(err.msg, "PMI_PORT"), "neither PMI_FD nor PMI_PORT: refused");
}

/* A server that never answers: each wait ends at the limit. */
static void timeout(void)
{
    int sv[2];
    char fdvar[32];
    char *envp[] = { fdvar, "PMI_RANK=1", "PMI_SIZE=2", "MPI_LOCALRANKID=1", NULL };
    struct pmic c;
    struct err err = { "" };
    const char *init = INIT;

    if (!ok(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "a socketpair"))
        return;
    snprintf(fdvar, sizeof fdvar, "PMI_FD=%d", sv[0]);
    ok(pmic_open(envp, 100, &c, &err) < 0 && c.timed_out &&
       strstr(err.msg, "mpiexec.hydra did not answer cmd=init on PMI_FD") &&
       strstr(err.msg, "within 100 ms (DLRUN_PMI_TIMEOUT)"),
       "no answer to cmd=init: timed out, naming the launcher and the request");
    ok(write(sv[1], init, strlen(init)) == (ssize_t)strlen(init) &&
       pmic_open(envp, 200, &c, &err) == 0, "  answered: open");
    ok(pmic_barrier(&c, &err) < 0 && c.timed_out &&
       strstr(err.msg, "did not answer cmd=barrier_in") &&
       strstr(err.msg, "some task never reached it"),
       "a barrier some task never reaches: timed out, saying so");
    ok(pmic_get(&c, "PMI_process_mapping", fdvar, sizeof fdvar, &err) < 0 &&
       strstr(err.msg, "cmd=get key=PMI_process_mapping"), "a get names its key");
    close(sv[0]);
    close(sv[1]);
}

/* mpiexec.hydra -pmi-port: a TCP server, the handshake, then one line
 * for each request. */
static void *port_server(void *arg)
{
    int l = *(int *)arg, s = accept(l, NULL, NULL);
    static const char r[] = "cmd=initack\ncmd=set size=4\ncmd=set rank=2\n"
        "cmd=set debug=0\n" INIT "cmd=get_result rc=0 msg=success "
        "value=(vector,(0,2,1))\ncmd=finalize_ack\n";
    static char got[512];
    ssize_t n, off = 0;

    if (s < 0 || write(s, r, sizeof r - 1) != (ssize_t)sizeof r - 1)
        return NULL;
    while ((n = read(s, got + off, sizeof got - 1 - (size_t)off)) > 0)
        off += n;
    got[off] = '\0';
    close(s);
    return got;
}

static void port(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t alen = sizeof a;
    int l = socket(AF_INET, SOCK_STREAM, 0);
    char var[64], map[64], *envp[] = { var, "PMI_ID=2", NULL };
    void *sent = NULL;
    pthread_t t;
    struct pmic c;
    struct err err = { "" };

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (!ok(l >= 0 && bind(l, (struct sockaddr *)&a, sizeof a) == 0 &&
            listen(l, 1) == 0 &&
            getsockname(l, (struct sockaddr *)&a, &alen) == 0 &&
            pthread_create(&t, NULL, port_server, &l) == 0, "a TCP server"))
        return;
    snprintf(var, sizeof var, "PMI_PORT=127.0.0.1:%d", ntohs(a.sin_port));
    ok(pmic_open(envp, 5000, &c, &err) == 0, "PMI_PORT: connected, init");
    is_int(c.rank * 10 + c.size, 24, "  rank 2 of 4 from the server");
    is_str(c.kvs, "kvs_7", "  its key-value space");
    ok(pmic_get(&c, "PMI_process_mapping", map, sizeof map, &err) == 0 &&
       strcmp(map, "(vector,(0,2,1))") == 0, "  the mapping");
    ok(pmic_finalize(&c, &err) == 0, "  finalize");
    pmic_close(&c);
    pthread_join(t, &sent);
    close(l);
    ok(sent && strncmp(sent, "cmd=initack pmiid=2\ncmd=init ", 29) == 0,
       "  the handshake names PMI_ID");
}

int main(void)
{
    field();
    reply();
    server();
    fd_open();
    agreement();
    no_fd();
    timeout();
    port();
    return tap_done();
}
