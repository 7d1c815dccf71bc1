/* t_planwire.c - the head's plan and settings as the agents receive them
 * (lib/place/planwire.h): round trips of the rank table and of every kind of
 * setting, the allocation and plan an agent builds from them, and every
 * refusal of the strict reader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place/planwire.h"
#include "tap.h"

/* n0: ranks 0-1 (login alice), n1 (an ssh alias of 10.1.0.7): 2-4,
 * fe80::1: 5 */
static struct plan_node nodes3[] = {
    { "n0", "alice", NULL, 0, 2 }, { "n1", NULL, "10.1.0.7", 2, 3 },
    { "fe80::1", NULL, NULL, 5, 1 },
};
static int rank_node3[] = { 0, 0, 1, 1, 1, 2 };
static const struct plan plan3 = { .nranks = 6, .nodes = nodes3, .nnodes = 3,
                                   .rank_node = rank_node3, .self = -1,
                                   .self_node = -1 };

static char *env_v[] = { "SECRET=a=b\nc", "EMPTY=", NULL };
static char *names_v[] = { "HOME_ONLY", NULL };
static int filter_v[] = { 0, 5 };

static struct planwire settings(void)
{
    struct planwire w = {
        .restart = 2, .max_restarts = 3, .master_addr = "10.0.0.1",
        .master_port = 29500, .iface = "ib0", .role = "trainer",
        .run_id = "job7", .gloo_rdv = "10.0.0.1,4000,ib0",
        .bind_arg = { "socket", "core", "isolate" }, .topology = "t.xml",
        .oversubscribe = 1, .report_bindings = 1, .keep_env = 1,
        .tf_config = 2,
        .env = { env_v, 2, 2, 0 }, .names = { names_v, 1, 1, 0 },
        .tag_output = 1, .timestamp_output = 1, .redirects = 3,
        .output_dir = "",
        .filter_given = 1, .ranks_filter = filter_v, .nfilter = 2,
        .kill_timeout_ms = 10000, .stall_timeout_ms = 1500,
        .mpi = PLANWIRE_MPI_AUTO, .summary = "s.json", .preflight = 1,
        .pf_timeout_s = 60, .pf_all_pairs = 1, .pf_import = "torch",
        .heartbeat_s = 10, .fanout = 2, .connect_timeout_s = 7,
        .ssh_port = 2222, .ssh_user = "bob", .ssh_identity = "/k",
        .ssh_known_hosts = "/kh", .ssh_config = "/c", .remote_dlrun = "/d",
        .wdir = "/w",
    };
    return w;
}

static void same_settings(const struct planwire *a, const struct planwire *b)
{
    int nums = a->restart == b->restart && a->max_restarts == b->max_restarts &&
        a->master_port == b->master_port && a->oversubscribe == b->oversubscribe &&
        a->report_bindings == b->report_bindings && a->keep_env == b->keep_env &&
        a->tf_config == b->tf_config &&
        a->tag_output == b->tag_output &&
        a->timestamp_output == b->timestamp_output &&
        a->redirects == b->redirects &&
        a->kill_timeout_ms == b->kill_timeout_ms &&
        a->stall_timeout_ms == b->stall_timeout_ms && a->mpi == b->mpi &&
        a->preflight == b->preflight && a->pf_timeout_s == b->pf_timeout_s &&
        a->pf_all_pairs == b->pf_all_pairs && a->heartbeat_s == b->heartbeat_s &&
        a->fanout == b->fanout && a->connect_timeout_s == b->connect_timeout_s &&
        a->ssh_port == b->ssh_port;
    const char *ta[] = { a->master_addr, a->iface, a->role, a->run_id,
        a->gloo_rdv, a->bind_arg[0], a->bind_arg[1], a->bind_arg[2],
        a->topology, a->output_dir, a->summary, a->pf_import, a->ssh_user,
        a->ssh_identity, a->ssh_known_hosts, a->ssh_config, a->remote_dlrun,
        a->wdir };
    const char *tb[] = { b->master_addr, b->iface, b->role, b->run_id,
        b->gloo_rdv, b->bind_arg[0], b->bind_arg[1], b->bind_arg[2],
        b->topology, b->output_dir, b->summary, b->pf_import, b->ssh_user,
        b->ssh_identity, b->ssh_known_hosts, b->ssh_config, b->remote_dlrun,
        b->wdir };
    int texts = 1;

    for (size_t i = 0; i < sizeof ta / sizeof ta[0]; i++)
        texts &= ta[i] && tb[i] && strcmp(ta[i], tb[i]) == 0;
    ok(nums, "every number comes back");
    ok(texts, "every text comes back (the empty one too)");
    ok(b->env.n == 2 && strcmp(b->env.v[0], "SECRET=a=b\nc") == 0 &&
       strcmp(b->env.v[1], "EMPTY=") == 0 && !b->env.v[2],
       "-x values come back in order, '=' and newline kept");
    ok(b->names.n == 1 && strcmp(b->names.v[0], "HOME_ONLY") == 0,
       "-x names without a value come back");
    ok(b->filter_given && b->nfilter == 2 && b->ranks_filter[0] == 0 &&
       b->ranks_filter[1] == 5, "the ranks filter comes back");
}

static void roundtrip(void)
{
    struct planwire w = settings(), got;
    struct err err = { "" };
    struct alloc a;
    struct plan p;
    size_t len = 0;
    uint8_t *buf = planwire_encode(&plan3, &w, &len, &err);

    ok(buf && len > PLANWIRE_HEADER && memcmp(buf, "DLPW", 4) == 0,
       "encode: a wire");
    is_int(planwire_decode(buf, len, &got, &err), 0, "decode it");
    is_str(err.msg, "", "  without an error");
    is_int(got.nnodes, 3, "3 nodes");
    is_int(got.nranks, 6, "6 ranks");
    ok(strcmp(got.nodes[0].host, "n0") == 0 && strcmp(got.nodes[0].login,
       "alice") == 0 && !got.nodes[1].login &&
       strcmp(got.nodes[2].host, "fe80::1") == 0 && got.nodes[1].nranks == 3,
       "hosts, logins and rank counts");
    ok(!got.nodes[0].addr_name && got.nodes[1].addr_name &&
       strcmp(got.nodes[1].addr_name, "10.1.0.7") == 0,
       "an ssh alias's HostName");
    ok(memcmp(got.rank_node, rank_node3, sizeof rank_node3) == 0,
       "each rank's node");
    same_settings(&w, &got);
    is_int(planwire_plan(&got, &a, &p, &err), 0, "the agent's plan from it");
    is_str(a.source, "hosts", "  its allocation's source");
    ok(a.nnodes == 3 && a.nodes[1].slots == 3 && a.nodes[0].login &&
       strcmp(a.nodes[0].login, "alice") == 0, "  nodes, slots and login");
    ok(p.nranks == 6 && p.nnodes == 3 && p.nodes[1].first_rank == 2 &&
       p.nodes[1].nranks == 3 && p.rank_local[4] == 2 && p.rank_node[5] == 2 &&
       strcmp(p.nodes[2].host, "fe80::1") == 0 && p.self_node == -1,
       "  rank tables as the head's");
    ok(!p.nodes[0].addr_name && strcmp(plan_addr_name(&p, 1), "10.1.0.7") == 0
       && strcmp(plan_addr_name(&p, 0), "n0") == 0,
       "  addresses from the alias's HostName, else the host");
    plan_free(&p);
    alloc_free(&a);
    planwire_free(&got);
    free(buf);
}

/* Ranks that alternate between nodes, and nothing but the plan. */
static void cyclic(void)
{
    struct plan_node n[] = { { "a", NULL, NULL, 0, 2 }, { "b", NULL, NULL, 1, 2 } };
    int rn[] = { 0, 1, 0, 1 };
    struct plan p = { .nranks = 4, .nodes = n, .nnodes = 2, .rank_node = rn };
    struct planwire w = { 0 }, got;
    struct err err = { "" };
    size_t len = 0;
    uint8_t *buf = planwire_encode(&p, &w, &len, &err);

    is_int(planwire_decode(buf, len, &got, &err), 0, "cyclic ranks: decoded");
    ok(got.nranks == 4 && memcmp(got.rank_node, rn, sizeof rn) == 0,
       "  each rank on its node");
    ok(!got.master_addr && !got.filter_given && got.env.n == 0 &&
       got.restart == 0, "  settings not given stay unset");
    planwire_free(&got);
    free(buf);
}

static void encode_refused(void)
{
    char *bad_env[] = { "NOVALUE", NULL }, *bad_name[] = { "A=1", NULL };
    struct planwire w = { .env = { bad_env, 1, 1, 0 } };
    struct err err = { "" };
    size_t len = 0;

    ok(!planwire_encode(&plan3, &w, &len, &err) && strstr(err.msg,
       "NAME=VALUE"), "encode refuses an -x value without '='");
    w = (struct planwire){ .names = { bad_name, 1, 1, 0 } };
    ok(!planwire_encode(&plan3, &w, &len, &err) && strstr(err.msg, "a NAME"),
       "encode refuses a name with a value");
    w = (struct planwire){ .redirects = 4 };
    ok(!planwire_encode(&plan3, &w, &len, &err) && strstr(err.msg,
       "redirects 4"), "encode refuses a number out of its range");
}

/* ---- the reader's refusals: a valid wire, changed ---- */

static uint8_t *base;
static size_t base_len;

static void set32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)(v >> 16);
    b[3] = (uint8_t)(v >> 24);
}

/* base with a field (id, bytes) added at its end, the length fixed. */
static uint8_t *with_field(uint16_t id, const void *data, size_t n,
                           size_t *len)
{
    uint8_t *b = malloc(base_len + 6 + n);

    memcpy(b, base, base_len);
    b[base_len] = (uint8_t)id;
    b[base_len + 1] = (uint8_t)(id >> 8);
    set32(b + base_len + 2, (uint32_t)n);
    memcpy(b + base_len + 6, data, n);
    *len = base_len + 6 + n;
    set32(b + 8, (uint32_t)(*len - PLANWIRE_HEADER));
    return b;
}

static void refused(const void *b, size_t len, const char *want,
                    const char *what)
{
    struct planwire w;
    struct err err = { "" };
    int rc = planwire_decode(b, len, &w, &err);

    if (!ok(rc == -1 && strstr(err.msg, want), what))
        printf("#   rc %d, error: %s\n", rc, err.msg);
    planwire_free(&w);
}

static void refused_field(uint16_t id, const void *data, size_t n,
                          const char *want, const char *what)
{
    size_t len;
    uint8_t *b = with_field(id, data, n, &len);

    refused(b, len, want, what);
    free(b);
}

/* base with restart, then restart again */
static void refused_twice(void)
{
    uint8_t *was = base, *b = with_field(16, (uint8_t[4]){ 1 }, 4, &base_len);

    base = b;
    refused_field(16, (uint8_t[4]){ 2 }, 4, "restart (field 16) twice",
                  "a number twice");
    base = was;
    base_len -= 10;
    free(b);
}

static void header_refusals(void)
{
    uint8_t *b = malloc(base_len);

    refused(base, 5, "not a dlrun plan", "too short for a header");
    memcpy(b, base, base_len);
    b[0] = 'X';
    refused(b, base_len, "not a dlrun plan", "no DLPW first");
    memcpy(b, base, base_len);
    set32(b + 4, PLANWIRE_VERSION + 1);
    refused(b, base_len, "version 3, this dlrun reads version 2",
            "another version, named");
    memcpy(b, base, base_len);
    set32(b + 8, (uint32_t)base_len);
    refused(b, base_len, "bytes of fields said", "a length that is not the "
            "wire's");
    refused(base, base_len - 1, "bytes of fields said", "cut short");
    memcpy(b, base, base_len);
    set32(b + 8, (uint32_t)(base_len - 1 - PLANWIRE_HEADER));
    refused(b, base_len - 1, "left", "the last field cut short");
    free(b);
}

static void field_refusals(void)
{
    uint8_t four[4] = { 1, 0, 0, 0 }, big[4] = { 0, 0, 1, 0 };
    uint8_t node_bad[] = { 1, 0, 0, 0, 9, 0, 'x' };
    uint8_t node_old[] = { 1, 0, 0, 0, 1, 0, 'x', 0, 0 };
    uint8_t node_zero[] = { 0, 0, 0, 0, 1, 0, 'x', 0, 0, 0, 0 };
    uint8_t node_host[] = { 1, 0, 0, 0, 2, 0, '-', 'x', 0, 0, 0, 0 };
    uint8_t node_login[] = { 1, 0, 0, 0, 1, 0, 'x', 2, 0, '-', 'y', 0, 0 };
    uint8_t node_addr[] = { 1, 0, 0, 0, 1, 0, 'x', 0, 0, 2, 0, '$', '(' };
    uint8_t node_long[] = { 1, 0, 0, 0, 1, 0, 'x', 0, 0, 9, 0, 'y' };
    uint8_t run_far[8] = { 9, 0, 0, 0, 1, 0, 0, 0 };
    uint8_t run_zero[8] = { 0 };

    refused_field(99, "", 0, "unknown field 99", "an unknown field");
    refused_twice();
    refused_field(18, big, 4, "master_port (field 18) at byte", "a number "
                  "out of range");
    refused_field(31, four, 3, "not 4 bytes", "a number of 3 bytes");
    refused_field(48, "a\0b", 3, "NUL byte", "a text with a NUL");
    refused_field(1, node_bad, sizeof node_bad, "do not add up",
                  "a node whose lengths do not add up");
    refused_field(1, node_zero, sizeof node_zero, "with 0 ranks",
                  "a node without ranks");
    refused_field(1, node_host, sizeof node_host, "host name", "a node "
                  "whose host is an option");
    refused_field(1, node_login, sizeof node_login, "login", "a bad login");
    refused_field(1, node_old, sizeof node_old, "do not add up",
                  "a node without its address name's length");
    refused_field(1, node_addr, sizeof node_addr, "host name", "a node "
                  "whose address name is no host name");
    refused_field(1, node_long, sizeof node_long, "do not add up",
                  "an address name longer than its field");
    refused_field(2, run_far, 8, "hold 7 ranks, not 6", "runs that hold "
                  "more ranks than the job");
    refused_field(2, run_zero, 8, "no rank", "a run of no rank");
    refused_field(2, run_zero, 4, "not 8", "a run of 4 bytes");
    refused_field(3, "NOEQ", 4, "not NAME=VALUE", "an -x value without =");
    refused_field(3, "=v", 2, "not NAME=VALUE", "an -x value without a name");
    refused_field(4, "A=1", 3, "not a NAME", "a name with a value");
    refused_field(5, four, 3, "ranks filter at byte", "a filter of 3 bytes");
    refused_field(5, (uint8_t[4]){ 0, 0, 0, 2 }, 4, "ranks filter: rank",
                  "a filtered rank past 2^24");
    refused_field(6, four, 4, "bad rank count", "the rank count twice");
}

/* Tables that do not hold together. */
static void table_refusals(void)
{
    struct plan_node n[] = { { "a", NULL, NULL, 0, 1 },
                             { "b", NULL, NULL, 1, 1 } };
    int rn[] = { 0, 1 };
    struct plan p = { .nranks = 2, .nodes = n, .nnodes = 2, .rank_node = rn };
    struct planwire w = { 0 };
    struct err err = { "" };
    size_t len;
    uint8_t *b = planwire_encode(&p, &w, &len, &err);
    /* runs follow the count (10 bytes) and the nodes (2 x 17 bytes) */
    size_t run1 = PLANWIRE_HEADER + 10 + 34 + 14 + 6;

    set32(b + run1, 0);             /* rank 1 on node 0 too */
    refused(b, len, "node 0 (a) says 1 ranks, the runs give it 2",
            "a node's count that the runs contradict");
    set32(b + run1, 2);
    refused(b, len, "run 1: node 2 of 2", "a run on a node not in the plan");
    free(b);
    b = malloc(PLANWIRE_HEADER);
    memcpy(b, base, PLANWIRE_HEADER);
    set32(b + 8, 0);
    refused(b, PLANWIRE_HEADER, "no node", "a plan without nodes");
    free(b);
    len = base_len;                 /* only a node: no rank count */
    base_len = PLANWIRE_HEADER;
    refused_field(1, (uint8_t[]){ 1, 0, 0, 0, 1, 0, 'x', 0, 0, 0, 0 }, 11,
                  "no rank count", "a plan without its rank count");
    base_len = len;
}

int main(void)
{
    struct planwire w = { 0 };
    struct err err = { "" };

    roundtrip();
    cyclic();
    encode_refused();
    base = planwire_encode(&plan3, &w, &base_len, &err);
    header_refusals();
    field_refusals();
    table_refusals();
    free(base);
    return tap_done();
}
