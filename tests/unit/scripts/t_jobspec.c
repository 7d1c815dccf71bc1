/* t_jobspec.c - the checks shared by `dlrun script`'s command line and
 * sites.yaml: schedulers, wall times, signals, counts, the task and
 * launcher modes, booleans, directive tokens, one-line texts, variable
 * names, and how a bad value is shown in a message (one line, cut). */
#include <stdio.h>
#include <string.h>

#include "scripts/jobspec.h"
#include "tap.h"

static void moved(void)
{
    struct err err = { "" };
    long secs = 0;
    char name[8] = "";

    ok(jobspec_parse_time("1:30:00", &secs, &err) == 0 && secs == 5400, "time H:M:S");
    ok(jobspec_parse_time("90", &secs, &err) == 0 && secs == 5400, "time minutes");
    ok(jobspec_parse_time("2-00:00:00", &secs, &err) == 0 && secs == 172800, "time D-H:M:S");
    ok(jobspec_parse_time("1-12", &secs, &err) == 0 && secs == 129600, "time D-H");
    ok(jobspec_parse_time("1:30", &secs, &err) < 0 && strstr(err.msg, "HH:MM:SS"),
       "time M:S (ambiguous) refused");
    ok(jobspec_parse_time("0:00:30", &secs, &err) < 0, "time under a minute refused");
    ok(jobspec_parse_time("1:60:00", &secs, &err) < 0, "time 60 minutes refused");
    ok(jobspec_parse_time("1h", &secs, &err) < 0, "time 1h refused");
    ok(jobspec_parse_signal("USR1@90", name, &secs, &err) == 0 &&
       strcmp(name, "USR1") == 0 && secs == 90, "signal USR1@90");
    ok(jobspec_parse_signal("SIGterm", name, &secs, &err) == 0 &&
       strcmp(name, "TERM") == 0 && secs == 60, "signal SIGterm, 60 s");
    ok(jobspec_parse_signal("KILL@10", name, &secs, &err) < 0, "signal KILL refused");
    ok(jobspec_parse_signal("USR1@x", name, &secs, &err) < 0, "signal USR1@x refused");
    ok(jobspec_check_token("gpu_a100-40g", &err) == 0, "token");
    ok(jobspec_check_token("gpu\nx", &err) < 0 && strstr(err.msg, "'gpu\\nx'") &&
       !strchr(err.msg, '\n'), "token with a newline refused, shown as \\n");
    ok(jobspec_check_token("a b", &err) < 0, "token with a space refused");
    ok(jobspec_check_token("$(id)", &err) < 0, "token with $( refused");
    ok(jobspec_parse_sched("pbs", &err) == sched_find("pbs") &&
       !jobspec_parse_sched("sge", &err), "schedulers");
    ok(jobspec_parse_launcher("dlrun", &err) == 0 &&
       jobspec_parse_launcher("mpirun", &err) == 1, "launchers dlrun, mpirun");
    ok(jobspec_parse_launcher("srun", &err) < 0 &&
       strstr(err.msg, "dlrun's own --launcher goes into dlrun-options"),
       "launcher srun refused, pointing at dlrun-options");
    ok(jobspec_parse_launcher("MPIRUN", &err) < 0 &&
       jobspec_parse_launcher("", &err) < 0 &&
       !strstr(err.msg, "dlrun's own"), "launcher MPIRUN, empty refused");
    ok(jobspec_check_env_name("NCCL_IB_HCA", &err) == 0 &&
       jobspec_check_env_name("1X", &err) < 0 &&
       jobspec_check_env_name("A-B", &err) < 0, "env names");
}

static void times_and_signals(void)
{
    struct err err = { "" };
    long secs = 0;
    char name[8] = "";

    ok(jobspec_parse_time("0-01:00", &secs, &err) == 0 && secs == 3600,
       "time D-H:M");
    ok(jobspec_parse_time("1", &secs, &err) == 0 && secs == 60,
       "one minute is the least");
    ok(jobspec_parse_time("0-00:00:59", &secs, &err) < 0 &&
       strstr(err.msg, "at least a minute"), "59 s refused");
    ok(jobspec_parse_time("-5", &secs, &err) < 0 &&
       jobspec_parse_time("1-", &secs, &err) < 0 &&
       jobspec_parse_time("", &secs, &err) < 0 &&
       jobspec_parse_time("1:2:3:4", &secs, &err) < 0 &&
       jobspec_parse_time("366-0", &secs, &err) < 0, "malformed times refused");
    ok(jobspec_parse_signal("sigusr2@1", name, &secs, &err) == 0 &&
       strcmp(name, "USR2") == 0 && secs == 1, "signal in lower case, @1");
    ok(jobspec_parse_signal("SIG", name, &secs, &err) < 0 &&
       jobspec_parse_signal("@90", name, &secs, &err) < 0 &&
       jobspec_parse_signal("USR1@0", name, &secs, &err) < 0 &&
       jobspec_parse_signal("USR1@65536", name, &secs, &err) < 0,
       "signal without a name, @0 and @65536 refused");
}

static void counts_and_modes(void)
{
    struct err err = { "" };
    long v = 0;

    ok(jobspec_parse_count("16", 1, 64, &v, &err) == 0 && v == 16, "count");
    ok(jobspec_parse_count("64", 1, 64, &v, &err) == 0 &&
       jobspec_parse_count("1", 1, 64, &v, &err) == 0 && v == 1,
       "count at both ends");
    v = 7;
    ok(jobspec_parse_count("65", 1, 64, &v, &err) < 0 && v == 7 &&
       strstr(err.msg, "from 1 to 64"), "count above max refused, out untouched");
    ok(jobspec_parse_count("0", 1, 64, &v, &err) < 0 &&
       jobspec_parse_count("-1", -5, 5, &v, &err) < 0 &&
       jobspec_parse_count("4x", 1, 64, &v, &err) < 0 &&
       jobspec_parse_count(" 4", 1, 64, &v, &err) < 0 &&
       jobspec_parse_count("", 1, 64, &v, &err) < 0 &&
       jobspec_parse_count("99999999999999999999", 1, 64, &v, &err) < 0,
       "below min, signs, trailing text, spaces, empty, overflow refused");

    ok(jobspec_parse_tasks("per-node", &err) == 0 &&
       jobspec_parse_tasks("per-gpu", &err) == 1, "tasks modes");
    ok(jobspec_parse_tasks("per-core", &err) < 0 && strstr(err.msg, "per-core"),
       "another mode refused, named");
    ok(jobspec_parse_bool("Yes", &err) == 1 && jobspec_parse_bool("ON", &err) == 1 &&
       jobspec_parse_bool("1", &err) == 1 && jobspec_parse_bool("false", &err) == 0 &&
       jobspec_parse_bool("off", &err) == 0 && jobspec_parse_bool("0", &err) == 0,
       "booleans in any case");
    ok(jobspec_parse_bool("2", &err) < 0 && jobspec_parse_bool("", &err) < 0,
       "other booleans refused");
    ok(jobspec_check_line("train on 8 nodes\twith tabs", &err) == 0, "a line");
    ok(jobspec_check_line("", &err) < 0 && strstr(err.msg, "empty"),
       "an empty line refused");
    ok(jobspec_check_line("a\rb", &err) < 0, "a carriage return refused");
    ok(jobspec_check_env_name("_x1", &err) == 0 &&
       jobspec_check_env_name("", &err) < 0, "names: _x1 good, empty refused");
}

static void schedulers_and_messages(void)
{
    struct err err = { "" };
    char b[80], long_text[200];

    ok(jobspec_parse_sched("slurm", &err) == sched_find("slurm") &&
       sched_find("slurm"), "slurm");
    ok(jobspec_parse_sched("pjm", &err) == sched_find("pjm") &&
       sched_find("pjm"), "pjm");
    ok(!jobspec_parse_sched("Slurm", &err), "names are lower case");
    is_str(err.msg, "unknown scheduler 'Slurm' (slurm, pbs, nqsv, lsf, pjm or flux)",
           "the message names the known ones");
    is_str(jobspec_parse_sched("lsf", &err)->name, "lsf", "the row's name");
    ok(!jobspec_parse_sched("", &err), "an empty name refused");

    is_str(jobspec_visible("a\nb\tc\x01\x7f", b), "a\\nb\\tc\\x01\\x7f",
           "controls written out");
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    jobspec_visible(long_text, b);
    ok(strlen(b) == 67 && strcmp(b + 64, "...") == 0, "cut after 64 bytes with ...");
    memset(long_text, '\x01', sizeof long_text - 1);
    jobspec_visible(long_text, b);
    ok(strlen(b) < 80 && strstr(b, "..."), "controls to the end: still fits");
    ok(!jobspec_parse_sched(long_text, &err) && !strchr(err.msg, '\x01'),
       "a message shows no raw control byte");
}

int main(void)
{
    moved();
    times_and_signals();
    counts_and_modes();
    schedulers_and_messages();
    return tap_done();
}
