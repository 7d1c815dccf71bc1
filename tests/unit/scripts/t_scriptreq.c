/* t_scriptreq.c - what `dlrun script` was asked for: each option's value
 * checked as sites.yaml's key (one line naming the option), the script's
 * dlrun words, the profile's lines merged with the command line's
 * (--drop-directive, --env replacing, --setup after the profile's), the
 * profile's --map-by left out for another GPU count with a note, and the
 * script refused when its dlrun line is (the parser handed in). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scripts/jobspec.h"
#include "scripts/scriptreq.h"
#include "util/say.h"
#include "util/strv.h"
#include "tap.h"

static char said[2048];
static int parsed, parse_rc;
static char words[1024];

static void keep(void *ctx, const char *line)
{
    (void)ctx;
    snprintf(said, sizeof said, "%s", line);
}

/* The parser cmd/ hands in: the words kept, parse_rc returned. */
static int fake_parse(void *ctx, const struct strv *w, const char *context,
                      struct dlrun_line *out)
{
    (void)ctx;
    (void)context;
    (void)out;
    parsed++;
    words[0] = '\0';
    for (size_t i = 0; i < w->n; i++)
        snprintf(words + strlen(words), sizeof words - strlen(words), "%s%s",
                 i ? " " : "", w->v[i]);
    if (parse_rc != EXIT_OK)
        say("bad dlrun line");
    return parse_rc;
}

static void setters(void)
{
    struct script_req r;

    memset(&r, 0, sizeof r);
    ok(scriptreq_set(&r, SITE_NODES, "--nodes", "4") == 0 &&
       strcmp(r.v[SITE_NODES], "4") == 0, "--nodes 4 kept");
    said[0] = '\0';
    ok(scriptreq_set(&r, SITE_NODES, "--nodes", "0") < 0 &&
       strncmp(said, "--nodes: ", 9) == 0, "--nodes 0: one line naming it");
    ok(scriptreq_set(&r, SITE_SCHEDULER, "--scheduler", "sge") < 0 &&
       strncmp(said, "--scheduler: ", 13) == 0, "an unknown scheduler");
    ok(scriptreq_set(&r, SITE_PARTITION, "--partition", "a b") < 0,
       "a partition with a space");
    ok(scriptreq_bind(&r, "--map-by", "ppr:4:socket") == 0 &&
       r.dlrun_args.n == 2 && strcmp(r.dlrun_args.v[0], "--map-by") == 0,
       "--map-by checked and kept for the script's dlrun");
    ok(scriptreq_bind(&r, "--bind-to", "wrist") < 0 && said[0],
       "a bad --bind-to refused now");
    ok(scriptreq_arg(&r, "--tag-output", NULL) == 0 && r.dlrun_args.n == 3,
       "an option without a value");
    ok(scriptreq_line(&r.directives, "--directive", "") < 0 &&
       strstr(said, "--directive '': empty"), "an empty directive");
    ok(scriptreq_env(&r, "NOEQ") < 0 &&
       strstr(said, "--env 'NOEQ': expected NAME=VALUE"), "--env NAME only");
    ok(scriptreq_env(&r, "1X=2") < 0, "--env with a bad name");
    ok(scriptreq_check_output("job-%j.out") < 0 &&
       strstr(said, "%j is the scheduler's output-file pattern"),
       "-o with %j: the job's output asked for of the wrong program");
    ok(scriptreq_check_output("job.sh") == 0, "-o FILE");
    ok(!scriptreq_failed(&r), "nothing failed");
    scriptreq_free(&r);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* A profile of scheduler pbs, 8 GPUs, a directive, an env and --map-by. */
static void profile(struct site_profile *p, char **dirs, char **env,
                    char **opts)
{
    memset(p, 0, sizeof *p);
    p->name = "site";
    p->v[SITE_SCHEDULER] = (struct site_value){ 1, "pbs", NULL, 0, 0 };
    p->v[SITE_GPUS_PER_NODE] = (struct site_value){ 1, "8", NULL, 0, 0 };
    p->v[SITE_DIRECTIVES] = (struct site_value){ 1, NULL, dirs, 2, 0 };
    p->v[SITE_ENV] = (struct site_value){ 1, NULL, env, 1, 0 };
    p->v[SITE_DLRUN_OPTIONS] = (struct site_value){ 1, NULL, opts, 2, 0 };
    p->v[SITE_SETUP] = (struct site_value){ 1, "source a", NULL, 0, 0 };
}

static void rendered(const char *tmpl)
{
    char *dirs[] = { "-C v100", "-l x=1", NULL }, *env[] = { "A=1", NULL };
    char *opts[] = { "--map-by", "ppr:4:socket", NULL };
    char *cmdv[] = { "python", "t.py", NULL }, *text = NULL;
    struct site_profile p;
    struct script_req r;
    const struct sched *sched = NULL;
    int rc;

    profile(&p, dirs, env, opts);
    memset(&r, 0, sizeof r);
    r.command = cmdv;
    r.v[SITE_TEMPLATE] = tmpl;
    r.v[SITE_GPUS_PER_NODE] = "4";
    r.v[SITE_NODES] = "2";
    r.setup = "echo b";
    scriptreq_line(&r.drops, "--drop-directive", "-C");
    scriptreq_line(&r.directives, "--directive", "-l y=2");
    scriptreq_env(&r, "A=2");
    parse_rc = EXIT_OK;
    said[0] = '\0';
    rc = scriptreq_render(&r, &p, fake_parse, NULL, &text, &sched);
    ok(rc == EXIT_OK &&
       text && sched == sched_find("pbs"), "rendered for the profile's scheduler");
    ok(text && !strstr(text, "#D -C v100") && strstr(text, "#D -l x=1\n") &&
       strstr(text, "#D -l y=2\n"), "-C dropped, the command line's added");
    ok(text && strstr(text, "export A=2") && !strstr(text, "A=1"),
       "--env replaces the profile's NAME");
    ok(text && strstr(text, "source a\necho b"), "--setup after the profile's");
    ok(parsed == 1 && strncmp(words, "run ", 4) == 0 &&
       !strstr(words, "ppr:4:socket") && strstr(words, "python t.py"),
       "the dlrun line parsed, the profile's --map-by left out");
    ok(strstr(said, "note: profile site's --map-by ppr:4:socket is for its 8 "
              "GPUs a node; with --gpus-per-node 4") != NULL, "and a note says so");
    free(text);
    parse_rc = EXIT_USAGE;
    ok(scriptreq_render(&r, &p, fake_parse, NULL, &text, &sched) ==
       EXIT_USAGE && !text && strcmp(said, "bad dlrun line") == 0,
       "a dlrun line the parser refuses: no script");
    scriptreq_free(&r);
    memset(&r, 0, sizeof r);
    r.command = cmdv;
    scriptreq_line(&r.drops, "--drop-directive", "-X");
    ok(scriptreq_render(&r, &p, fake_parse, NULL, &text, &sched) ==
       EXIT_USAGE && strstr(said, "--drop-directive '-X': the profile has no "
                            "such directive (it has 2"), "a drop of nothing");
    scriptreq_free(&r);
    memset(&r, 0, sizeof r);
    r.command = cmdv;
    ok(scriptreq_render(&r, NULL, fake_parse, NULL, &text, &sched) ==
       EXIT_USAGE && strstr(said, "no scheduler: give --scheduler"),
       "no profile, no --scheduler");
}

/* --spares N: on the dlrun line; Slurm's job gets --no-kill (once, even
 * when given), PBS's nothing of the kind; N not fewer than -N refused. */
static void spares(const char *tmpl)
{
    char *cmdv[] = { "python", "t.py", NULL }, *text = NULL;
    const struct sched *sched = NULL;
    struct script_req r;

    memset(&r, 0, sizeof r);
    r.command = cmdv;
    r.v[SITE_TEMPLATE] = tmpl;
    r.v[SITE_NODES] = "4";
    r.v[SITE_SCHEDULER] = "slurm";
    parse_rc = EXIT_OK;
    ok(scriptreq_spares(&r, "x") < 0 && strstr(said, "--spares x"),
       "--spares x: refused");
    ok(scriptreq_spares(&r, "1") == 0 && r.spares == 1, "--spares 1 kept");
    ok(scriptreq_render(&r, NULL, fake_parse, NULL, &text, &sched) == EXIT_OK &&
       text && strstr(text, "#D --no-kill\n") && strstr(words, "--spares 1"),
       "slurm: --no-kill, and --spares 1 on the dlrun line");
    free(text);
    text = NULL;
    scriptreq_line(&r.directives, "--directive", "--no-kill");
    ok(scriptreq_render(&r, NULL, fake_parse, NULL, &text, &sched) == EXIT_OK &&
       text && strstr(text, "#D --no-kill\n") &&
       !strstr(strstr(text, "#D --no-kill\n") + 1, "#D --no-kill\n"),
       "  given already: once");
    free(text);
    text = NULL;
    strv_free(&r.directives);
    r.v[SITE_SCHEDULER] = "pbs";
    ok(scriptreq_render(&r, NULL, fake_parse, NULL, &text, &sched) == EXIT_OK &&
       text && !strstr(text, "no-kill") && strstr(words, "--spares 1"),
       "pbs: no such directive, --spares on the line");
    free(text);
    text = NULL;
    r.v[SITE_NODES] = "1";
    ok(scriptreq_render(&r, NULL, fake_parse, NULL, &text, &sched) ==
       EXIT_USAGE && !text && strcmp(said, "--spares 1: the job asks for 1 "
       "node; hold fewer in reserve than it has, or ask for more nodes (-N)")
       == 0, "-N 1 --spares 1: refused in one line");
    r.v[SITE_NODES] = "2";
    ok(scriptreq_render(&r, NULL, fake_parse, NULL, &text, &sched) ==
       EXIT_OK && text, "-N 2 --spares 1: kept");
    free(text);
    scriptreq_free(&r);
}

int main(void)
{
    char tmpl[] = "/tmp/t_scriptreq.XXXXXX";
    int fd;

    say_set_sink(keep, NULL);
    setters();
    fd = mkstemp(tmpl);
    if (fd < 0)
        return 1;
    close(fd);
    put(tmpl, "{{#directives}}\n#D {{.}}\n{{/directives}}\n{{#env}}\n"
        "export {{.}}\n{{/env}}\n{{#setup}}\n{{.}}\n{{/setup}}\n"
        "{{dlrun_line}}\n");
    rendered(tmpl);
    spares(tmpl);
    unlink(tmpl);
    return tap_done();
}
