/* t_stall.c - the stall detector's engine (lib/observe/stall.c) with made-up
 * samples, its duration parser and faulthandler reader.  The /proc parsing
 * it is fed from (lib/observe/procstat.c) is tested in t_procstat.c. */
#include <stdio.h>
#include <string.h>

#include "observe/stall.h"
#include "tap.h"

/* Two ranks, 10 s timeout, 100 Hz, a sample per second. */
static void engine(void)
{
    struct stall *s = stall_create(2, 10000, 100);
    struct stall_sample v[2] = { { .alive = 1 }, { .alive = 1 } };
    int stalled = 0;
    long t = 0;

    ok(s != NULL, "created");
    for (t = 0; t <= 9000; t += 1000)
        stalled |= stall_feed(s, t, v);
    ok(!stalled, "quiet for 9 s of a 10 s timeout: not stalled");
    is_int(stall_quiet_ms(s, 9000), 9000, "quiet since the first sample");
    v[1].output = 1;                        /* rank 1 printed a line */
    ok(!stall_feed(s, 10000, v), "output restarts the window");
    for (t = 11000; t < 20000; t += 1000)
        stalled |= stall_feed(s, t, v);
    ok(!stalled, "9 s after the output: not stalled");
    ok(stall_feed(s, 20000, v), "10 s after the output: stalled");
    /* CPU: a busy rank (100 ticks a second) is never stalled */
    stall_reset(s);
    stalled = 0;
    for (t = 0; t <= 60000; t += 1000) {
        v[0].cpu += 100;
        stalled |= stall_feed(s, t, v);
    }
    ok(!stalled, "a computing rank that prints nothing is not stalled");
    is_int((long)stall_window_cpu(s, 0), 0, "its window starts at its last activity");
    /* 1 tick a second (1% of a CPU) is a helper thread's noise */
    stall_reset(s);
    for (t = 0; t <= 10000; t += 1000) {
        v[0].cpu += 1;
        stalled = stall_feed(s, t, v);
    }
    ok(stalled, "1% of a CPU does not count as work");
    is_int((long)stall_window_cpu(s, 0), 10, "CPU used in the window");
    /* progress alone keeps it alive */
    stall_reset(s);
    stalled = 0;
    for (t = 0; t <= 30000; t += 1000) {
        if (t % 5000 == 0)
            v[1].progress++;
        stalled |= stall_feed(s, t, v);
    }
    ok(!stalled, "progress every 5 s keeps a 10 s window open");
    /* an ended rank is not activity: its last numbers do not count */
    stall_reset(s);
    v[0].alive = 0;
    stall_feed(s, 0, v);
    v[0].cpu += 1000;
    for (t = 1000; t <= 10000; t += 1000)
        stalled = stall_feed(s, t, v);
    ok(stalled, "the rank that ended does not keep the others alive");
    stall_destroy(s);
}

#define T(tid) (STALL_THREAD | (tid))

/* Two ranks, 10 s, 100 Hz, a sample a second: rank 0 burns a whole CPU
 * with the stacks stk[t % nstk] (lengths len[]), rank 1 sleeps; returns
 * the first time stalled (-1: never within 60 s) and leaves the engine's
 * verdicts on the way in *wanted (samples asked for). */
static long spin_run(const unsigned long long (*stk)[12], const size_t *len,
                     int nstk, int *wanted, int *spun)
{
    struct stall *s = stall_create(2, 10000, 100);
    struct stall_sample v[2] = { { .alive = 1 }, { .alive = 1 } };
    int want[2];
    long hit = -1;

    *wanted = *spun = 0;
    for (long t = 0, k = 0; t <= 60000 && hit < 0; t += 1000, k++) {
        v[0].cpu += 100;
        v[0].stack = NULL;
        if (stall_wants_stacks(s, t, v, want) > 0 && want[0]) {
            (*wanted)++;
            v[0].stack = stk[k % nstk];
            v[0].nstack = len[k % nstk];
        }
        if (want[1])
            hit = -2;                   /* the sleeping one: never */
        if (stall_feed(s, t, v))
            hit = t;
        *spun |= stall_spinning(s, 0);
    }
    stall_destroy(s);
    return hit;
}

/* Spinning ranks (CPU, no output, a stack that stays) stall; computing
 * ones (a stack that leaves its base, or goes deep) never do. */
static void spins(void)
{
    /* a poll loop: at its base, or one or two calls below it */
    static const unsigned long long poll[3][12] = {
        { T(7), 0x1000, 0x2000, 0x3000 },
        { T(7), 0x1000, 0x2000, 0x3000, 0x3100 },
        { T(7), 0x1000, 0x2000, 0x3000, 0x3200, 0x9000 },
    };
    static const size_t poll_len[3] = { 4, 5, 6 };
    /* a computation: two steps in turn, each five calls deep */
    static const unsigned long long comp[2][12] = {
        { T(7), 0x1000, 0x2000, 0x4000, 0x4100, 0x4200, 0x4300, 0x4400 },
        { T(7), 0x1000, 0x2100, 0x5000, 0x5100, 0x5200, 0x5300, 0x5400 },
    };
    static const size_t comp_len[2] = { 8, 8 };
    /* a recursion: the same place, five calls deeper now and then */
    static const unsigned long long deep[2][12] = {
        { T(7), 0x1000, 0x2000 },
        { T(7), 0x1000, 0x2000, 0x6000, 0x6000, 0x6000, 0x6000, 0x6000 },
    };
    static const size_t deep_len[2] = { 3, 8 };
    static const unsigned long long py[2][12] = {
        { T(7) | STALL_INTERP, 0x1000, 0x2000 },
        { T(7) | STALL_INTERP, 0x1000, 0x2000 },
    };
    static const size_t py_len[2] = { 3, 3 };
    /* a helper thread that sleeps throughout beside the poller; then a
     * thread that came and went */
    static const unsigned long long two[2][12] = {
        { T(7), 0x1000, 0x2000, T(9), 0x1000, 0x7000 },
        { T(7), 0x1000, 0x2000, 0x3000, T(9), 0x1000, 0x7000 },
    };
    static const size_t two_len[2] = { 6, 7 };
    static const unsigned long long churn[2][12] = {
        { T(7), 0x1000, 0x2000, T(9), 0x1000 },
        { T(7), 0x1000, 0x2000, T(10), 0x1000 },
    };
    static const size_t churn_len[2] = { 5, 5 };
    /* a script: its stack waits, its commands come and go */
    static const unsigned long long script[2][12] = {
        { T(STALL_REAPED | 40), T(7), 0x1000, 0x2000 },
        { T(STALL_REAPED | 41), T(7), 0x1000, 0x2000 },
    };
    static const size_t script_len[2] = { 4, 4 };
    static const unsigned long long idle_kids[1][12] = {
        { T(STALL_REAPED | 40), T(7), 0x1000, 0x2000 },
    };
    static const size_t idle_kids_len[1] = { 4 };
    int wanted, spun;

    /* the first sample (t=1) counts as a move: 10 s from there */
    is_int(spin_run(poll, poll_len, 3, &wanted, &spun), 11000,
           "a poll loop that burns a CPU stalls a timeout after its first "
           "stack sample");
    ok(wanted >= 10, "its stacks were sampled while CPU alone said busy");
    ok(spun, "and it counts as spinning");
    is_int(spin_run(comp, comp_len, 2, &wanted, &spun), -1,
           "a rank whose calls part more than STALL_SPIN_DEPTH above their "
           "ends is never stalled");
    is_int(spin_run(deep, deep_len, 2, &wanted, &spun), -1,
           "nor one that goes more than STALL_SPIN_DEPTH calls deeper");
    is_int(spin_run(py, py_len, 2, &wanted, &spun), -1,
           "nor one running interpreter code (Python)");
    is_int(spin_run(two, two_len, 2, &wanted, &spun), 11000,
           "a sleeping helper thread beside the poller: stalled");
    is_int(spin_run(churn, churn_len, 2, &wanted, &spun), -1,
           "threads that come and go are a move");
    is_int(spin_run(poll, poll_len, 0 + 1, &wanted, &spun), 11000,
           "one unchanging stack: stalled");
    is_int(spin_run(script, script_len, 2, &wanted, &spun), -1,
           "a process whose children end (a script's commands) moves");
    is_int(spin_run(idle_kids, idle_kids_len, 1, &wanted, &spun), 11000,
           "children that ended before, none since: stalled");
}

/* What is sampled when, and what a sample cannot override. */
static void stack_rules(void)
{
    static const unsigned long long sig[] = { T(3), 0x1000, 0x2000 };
    struct stall *s = stall_create(2, 10000, 100);
    struct stall_sample v[2] = { { .alive = 1 }, { .alive = 1 } };
    int want[2] = { 7, 7 }, stalled = 0;

    is_int(stall_wants_stacks(s, 0, v, want), 0, "before the first feed: none");
    stall_feed(s, 0, v);
    v[0].cpu = 5;
    v[1].cpu = 0;
    is_int(stall_wants_stacks(s, 1000, v, want), 1, "CPU alone says busy: one");
    ok(want[0] && !want[1], "the busy rank, not the idle one");
    v[1].output = 1;
    is_int(stall_wants_stacks(s, 1000, v, want), 0,
           "a rank printed: nothing sampled (the window starts again)");
    stall_feed(s, 1000, v);
    /* a spinner whose stacks cannot be read counts as working */
    for (long t = 2000; t <= 30000; t += 1000) {
        v[0].cpu += 100;
        stalled |= stall_feed(s, t, v);
    }
    ok(!stalled, "CPU without a stack sample is work, as before");
    /* still stacks, then a line of output: the window starts again */
    stall_reset(s);
    stalled = 0;
    for (long t = 0; t <= 9000; t += 1000) {
        v[0].cpu += 100;
        v[0].stack = sig;
        v[0].nstack = 3;
        stalled |= stall_feed(s, t, v);
    }
    v[0].output++;
    stalled |= stall_feed(s, 10000, v);
    for (long t = 11000; t <= 19000; t += 1000) {
        v[0].cpu += 100;
        stalled |= stall_feed(s, t, v);
    }
    ok(!stalled, "a spinner's line restarts its window");
    ok(stall_feed(s, 21000, v), "and a timeout of spinning after it stalls");
    stall_destroy(s);
}

static void durations(void)
{
    struct err err = { "" };
    long ms = 0;

    ok(stall_parse_duration("--stall-timeout", "600", &ms, &err) == 0 &&
       ms == 600000, "600 is seconds");
    ok(stall_parse_duration("x", "10m", &ms, &err) == 0 && ms == 600000, "10m");
    ok(stall_parse_duration("x", "1h30m", &ms, &err) == 0 && ms == 5400000,
       "1h30m");
    ok(stall_parse_duration("x", "2.5s", &ms, &err) == 0 && ms == 2500, "2.5s");
    const char *bad[] = { "", "0", "-5", "5x", "abc", "0.5", "31d", "1 m", "m" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char what[64];
        err.msg[0] = '\0';
        snprintf(what, sizeof what, "'%s' refused", bad[i]);
        ok(stall_parse_duration("--stall-timeout", bad[i], &ms, &err) < 0 &&
           strstr(err.msg, "--stall-timeout"), what);
    }
}

static void python_where(void)
{
    const char dump[] =
        "step 3\n"
        "Fatal Python error: Aborted\n\n"
        "Thread 0x00007f0000000001 (most recent call first):\n"
        "  File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n"
        "  File \"/usr/lib/python3.11/threading.py\", line 622 in wait\n\n"
        "Current thread 0x00007f0000000002 (most recent call first):\n"
        "  File \"/usr/lib/python3/dist-packages/torch/distributed/"
        "distributed_c10d.py\", line 1536 in all_reduce\n"
        "  File \"/tmp/x/train.py\", line 20 in main\n";
    char buf[128];

    ok(stall_py_where(dump, strlen(dump), buf, sizeof buf) == 0, "found a frame");
    is_str(buf, "all_reduce (distributed_c10d.py:1536)", "the current thread's innermost");
    const char other[] = "Thread 0x1 (most recent call first):\n"
                         "  File \"a.py\", line 7 in spin\n";
    ok(stall_py_where(other, strlen(other), buf, sizeof buf) == 0 &&
       strcmp(buf, "spin (a.py:7)") == 0, "no current thread: the first");
    ok(stall_py_where("hello\n", 6, buf, sizeof buf) < 0, "no dump: -1");
    const char cut[] = "Current thread 0x1 (most recent call first):\n  File \"a.py";
    ok(stall_py_where(cut, strlen(cut), buf, sizeof buf) < 0, "a cut dump: -1");
}

struct got {
    int n, rank[8];
    char where[8][STALL_WHERE_MAX];
};

static void collect(void *ctx, int rank, const char *where)
{
    struct got *g = ctx;

    if (g->n < 8) {
        g->rank[g->n] = rank;
        snprintf(g->where[g->n++], STALL_WHERE_MAX, "%s", where);
    }
}

static void where_reports(void)
{
    const char t[] = "3 stuck (a.py:7)\n11 backward (__init__.py:197)\n"
                     "x bad\n99 out of range\n4 \x01ctl\n5\n\n6 ";
    struct got g = { 0 };
    int bad = stall_where_parse(t, strlen(t), 12, collect, &g);

    is_int(g.n, 2, "two good lines");
    is_int(bad, 5, "five bad ones counted");
    ok(g.rank[0] == 3 && strcmp(g.where[0], "stuck (a.py:7)") == 0, "first");
    ok(g.rank[1] == 11 && strcmp(g.where[1], "backward (__init__.py:197)") == 0,
       "second");

    int ranks[5] = { 0, 1, 2, 3, 4 };
    const char *hosts[5] = { "n1", "n1", "n2", "n2", "n2" };
    char wh[5][STALL_WHERE_MAX] = { "g", "f", "g", "g", "" };
    char line[256];
    stall_format_groups(5, ranks, hosts, (const char (*)[STALL_WHERE_MAX])wh,
                        line, sizeof line);
    is_str(line, "rank 1 (n1) in f; ranks 0 (n1), 2, 3 (n2) in g",
           "smallest group first, hosts after their ranks, ended left out");
    char tiny[12];
    stall_format_groups(5, ranks, hosts, (const char (*)[STALL_WHERE_MAX])wh,
                        tiny, sizeof tiny);
    is_int((long)strlen(tiny), 11, "cut to the buffer");
}

#define WH(x) ((const char (*)[STALL_WHERE_MAX])(x))

/* Which node the stall line's groups blame: one whose ranks alone stand
 * apart while the others wait elsewhere, and only then. */
static void one_node(void)
{
    const char *h3[6] = { "n1", "n1", "n2", "n2", "n3", "n3" };
    char stuck[6][STALL_WHERE_MAX] = { "g", "g", "f", "f", "g", "g" };
    char hang[6][STALL_WHERE_MAX] = { "g", "g", "g", "g", "g", "g" };
    char split[6][STALL_WHERE_MAX] = { "g", "g", "f", "h", "g", "g" };
    char span[6][STALL_WHERE_MAX] = { "g", "g", "f", "f", "f", "g" };
    char both[6][STALL_WHERE_MAX] = { "g", "g", "f", "f", "h", "h" };
    char ended[6][STALL_WHERE_MAX] = { "g", "", "f", "", "g", "g" };
    char alone[6][STALL_WHERE_MAX] = { "", "", "f", "f", "", "" };
    const char *h2[2] = { "n1", "n2" };
    char two[2][STALL_WHERE_MAX] = { "f", "g" };

    is_int(stall_one_node(6, h3, WH(stuck)), 2,
           "n2's ranks in f, the others in g: n2 (its first entry)");
    is_int(stall_one_node(6, h3, WH(hang)), -1,
           "every rank in g: a hang of the program, no node");
    is_int(stall_one_node(6, h3, WH(split)), -1,
           "n2's ranks apart but not together: none");
    is_int(stall_one_node(6, h3, WH(span)), -1,
           "the odd ones out span two nodes: none");
    is_int(stall_one_node(6, h3, WH(both)), -1,
           "two nodes each in a place of its own: none");
    is_int(stall_one_node(6, h3, WH(ended)), 2,
           "ranks that had ended are left out");
    is_int(stall_one_node(6, h3, WH(alone)), -1,
           "one node's ranks and no others: none to wait on it");
    is_int(stall_one_node(2, h2, WH(two)), -1,
           "two nodes apart: no telling which waits on which");
    is_int(stall_one_node(0, h2, WH(two)), -1, "no entries: none");
}

int main(void)
{
    where_reports();
    one_node();
    engine();
    spins();
    stack_rules();
    durations();
    python_where();
    return tap_done();
}
