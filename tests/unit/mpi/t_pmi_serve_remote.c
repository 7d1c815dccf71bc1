/* t_pmi_serve_remote.c - the simple PMI fence across nodes: two servers,
 * as two agents would run them, each for its node's two ranks, meet
 * through a broker that takes 16-byte values (the blobs go in chunks); a
 * key put on one node is read on the other after the barrier, and not
 * before; a second fence carries only what was put since; the pairs'
 * format refuses what another node should not send. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpi/pmi_serve.h"
#include "mpi/pmi_serve_int.h"
#include "testbroker.h"
#include "tap.h"

static void plan4(struct plan *p)
{
    struct err err = { "" };

    plan_alloc(p, 4, 2, &err);
    p->nodes[0].host = "a";
    p->nodes[1].host = "b";
    for (int r = 0; r < 4; r++)
        p->rank_node[r] = r / 2;
    plan_count_local(p);
}

/* Serve both until rank fd has an answer (or 5 s): what it read. */
static const char *answer(struct pmi_serve *a, struct pmi_serve *b, int fd)
{
    static char buf[2048];
    struct err err = { "" };
    ssize_t n = -1;

    for (int i = 0; i < 500 && n <= 0; i++) {
        struct pollfd p[2] = { { pmi_serve_fd(a), POLLIN, 0 },
                               { pmi_serve_fd(b), POLLIN, 0 } };
        poll(p, 2, 10);
        pmi_serve_step(a, &err);
        pmi_serve_step(b, &err);
        n = recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT);
    }
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static void say_(int fd, const char *line)
{
    if (write(fd, line, strlen(line)) != (ssize_t)strlen(line))
        printf("# write failed\n");
}

static int count_pair(void *ctx, const char *key, const char *val)
{
    (void)key;
    (void)val;
    (*(int *)ctx)++;
    return 0;
}

static void test_pairs(void)
{
    char *buf = NULL, big[1100];
    size_t len = 0, cap = 0;
    int n = 0;

    pmi_pairs_add(&buf, &len, &cap, "k1", "v1");
    pmi_pairs_add(&buf, &len, &cap, "k2", "");
    is_int(pmi_pairs_each(buf, len, count_pair, &n), 2, "two pairs back");
    is_int(pmi_pairs_each(buf, len - 1, count_pair, &n), -1,
           "a pair cut short: refused");
    is_int(pmi_pairs_each("\0v\0", 3, count_pair, &n), -1, "an empty key");
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    len = 0;
    pmi_pairs_add(&buf, &len, &cap, "k", big);
    is_int(pmi_pairs_each(buf, len, count_pair, &n), -1,
           "a value over 1024 bytes");
    free(buf);
}

int main(void)
{
    uint8_t tok[TOKEN_BYTES] = { 9, 8, 7 };
    struct broker_limits lim = { .max_value = 16 };
    struct testbroker tb;
    struct err err = { "" };
    struct plan p = { 0 };
    static const int ra[] = { 0, 1 }, rb[] = { 2, 3 };
    struct pmi_serve *a, *b;
    int fd[4];

    test_pairs();
    if (!ok(testbroker_start(&tb, tok, &lim, &err) == 0, "a broker"))
        return tap_done();
    plan4(&p);
    a = pmi_serve_create(&(struct pmi_serve_opts){ .plan = &p, .ranks = ra,
        .nranks = 2, .kvsname = "k", .broker = tb.addr, .token = tb.hex,
        .job_id = "job1" }, &err);
    b = pmi_serve_create(&(struct pmi_serve_opts){ .plan = &p, .ranks = rb,
        .nranks = 2, .kvsname = "k", .broker = tb.addr, .token = tb.hex,
        .job_id = "job1" }, &err);
    ok(a && b && pmi_serve_begin(a, &err) == 0 &&
       pmi_serve_begin(b, &err) == 0, "two nodes' servers");
    for (int r = 0; r < 4; r++)
        fd[r] = pmi_serve_child_fd(r < 2 ? a : b, r);
    is_str(answer(a, b, (say_(fd[0], "cmd=get kvsname=k key="
           "PMI_process_mapping\n"), fd[0])),
           "cmd=get_result rc=0 msg=success value=(vector,(0,2,2))\n",
           "two nodes of two");
    is_str(answer(a, b, (say_(fd[0], "cmd=put kvsname=k key=card-0 "
           "value=0123456789abcdef0123456789\n"), fd[0])),
           "cmd=put_result rc=0 msg=success\n", "rank 0 puts on node a");
    is_str(answer(a, b, (say_(fd[3], "cmd=get kvsname=k key=card-0\n"),
           fd[3])), "cmd=get_result rc=-1 msg=key_not_found\n",
           "node b has not got it before the barrier");
    for (int r = 0; r < 4; r++)
        say_(fd[r], "cmd=barrier_in\n");
    for (int r = 0; r < 4; r++)
        is_str(answer(a, b, fd[r]), "cmd=barrier_out rc=0\n",
               r == 0 ? "the barrier ends on both nodes" : "  and for the next");
    is_str(answer(a, b, (say_(fd[3], "cmd=get kvsname=k key=card-0\n"),
           fd[3])), "cmd=get_result rc=0 msg=success "
           "value=0123456789abcdef0123456789\n",
           "node b reads rank 0's key (in 16-byte chunks)");
    say_(fd[2], "cmd=put kvsname=k key=card-2 value=22\n");
    answer(a, b, fd[2]);
    for (int r = 0; r < 4; r++)
        say_(fd[r], "cmd=barrier_in\n");
    for (int r = 0; r < 4; r++)
        answer(a, b, fd[r]);
    is_str(answer(a, b, (say_(fd[1], "cmd=get kvsname=k key=card-2\n"),
           fd[1])), "cmd=get_result rc=0 msg=success value=22\n",
           "a second fence: node a reads rank 2's key");
    pmi_serve_destroy(a);
    pmi_serve_destroy(b);
    testbroker_stop(&tb);
    plan_free(&p);
    return tap_done();
}
