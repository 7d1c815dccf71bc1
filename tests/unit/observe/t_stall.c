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
    struct stall_sample v[2] = { { 1, 0, 0, 0 }, { 1, 0, 0, 0 } };
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

int main(void)
{
    where_reports();
    engine();
    durations();
    python_where();
    return tap_done();
}
