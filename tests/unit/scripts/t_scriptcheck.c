/* t_scriptcheck.c - a job script's dlrun line checked before the queue:
 * the profile's node: line made a topology, ranks placed on it (more GPUs
 * than it has refused, a --map-by ppr:N for another count refused with
 * the fix), the words handed to the parser cmd/ gives, and --check FILE
 * (the dlrun lines found, the "# Profile:" line, a file without one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "place/topo.h"
#include "scripts/scriptcheck.h"
#include "util/say.h"
#include "util/strv.h"
#include "tap.h"

static char said[2048];
static int parsed, per_node;
static char last[1024];

static void keep(void *ctx, const char *line)
{
    (void)ctx;
    snprintf(said, sizeof said, "%s", line);
}

/* The parser cmd/ hands in: the last words kept, per_node ranks a node. */
static int fake_parse(void *ctx, const struct strv *w, const char *context,
                      struct dlrun_line *out)
{
    (void)ctx;
    (void)context;
    parsed++;
    last[0] = '\0';
    for (size_t i = 0; i < w->n; i++)
        snprintf(last + strlen(last), sizeof last - strlen(last), "%s%s",
                 i ? " " : "", w->v[i]);
    out->per_node = per_node;
    return EXIT_OK;
}

static void node(struct site_profile *p)
{
    memset(p, 0, sizeof *p);
    p->name = "site";
    p->v[SITE_NODE] = (struct site_value){ 1, "package:2 core:8 gpu:4",
                                           NULL, 0, 0 };
    p->v[SITE_GPUS_PER_NODE] = (struct site_value){ 1, "4", NULL, 0, 0 };
}

static void placed(const struct site_profile *p)
{
    struct bind_rank out[8];
    struct bind_opts b;
    struct err e = { "" };
    char desc[256];
    struct topo *t = scriptcheck_profile_topo(p, "site", desc, sizeof desc);

    ok(t && desc[0], "the node: line made a topology, described");
    if (!t)
        return;
    ok(scriptcheck_place(t, desc, "site", &(struct bind_opts){ 0 }, 4, 4,
                         NULL, out) == 0 && out[3].gpu == 3,
       "four ranks on four GPUs");
    said[0] = '\0';
    ok(scriptcheck_place(t, desc, "site", &(struct bind_opts){ 0 }, 8, 8,
                         NULL, out) == EXIT_USAGE &&
       strstr(said, "8 GPUs per node asked for, but profile site's node"),
       "more GPUs than the node has");
    memset(&b, 0, sizeof b);
    bind_parse_map_by("ppr:4:socket", &b, &e);
    ok(scriptcheck_place(t, desc, "site", &b, 4, 4, "--gpus-per-node",
                         out) == EXIT_USAGE &&
       strstr(said, "asks for 8 a node") &&
       strstr(said, "pass --map-by ppr:2:socket"),
       "ppr:4:socket for four ranks: the fix named");
    topo_free(t);
    ok(!scriptcheck_profile_topo(NULL, "x", desc, sizeof desc) && !desc[0],
       "no profile: no node");
}

static void job(const struct site_profile *p)
{
    const char *cmdv[] = { "python", "t.py", NULL };
    struct jobspec j;

    memset(&j, 0, sizeof j);
    j.sched = sched_find("slurm");
    j.nodes = 2;
    j.gpus_per_node = 4;
    j.command = cmdv;
    parsed = 0;
    per_node = 0;
    ok(scriptcheck_job(&j, p, "site", fake_parse, NULL) == EXIT_OK &&
       parsed == 1 && strncmp(last, "run ", 4) == 0 &&
       strstr(last, "python t.py"), "the job's dlrun words parsed, placed");
    j.gpus_per_node = 8;
    said[0] = '\0';
    ok(scriptcheck_job(&j, p, "site", fake_parse, NULL) == EXIT_USAGE &&
       strstr(said, "8 GPUs per node asked for, but profile site's node"),
       "eight GPUs of a 4-GPU node: refused");
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void file(const struct site_profile *p)
{
    char path[] = "/tmp/t_scriptcheck.XXXXXX";
    struct sites s = { (struct site_profile *)p, 1, NULL };
    const struct site_profile *got = NULL;
    int fd = mkstemp(path), n = 0, wn = 0;

    if (fd < 0)
        return;
    close(fd);
    put(path, "#!/bin/sh\n# Profile: site (checked)\nmodule load x\n"
        "/opt/bin/dlrun --tag-output -- python t.py &\n# dlrun not this\n");
    parsed = 0;
    per_node = 0;
    ok(scriptcheck_file(path, &s, NULL, fake_parse, NULL, &n, &got,
                        &wn) ==
       EXIT_OK && n == 1 && got == p && parsed == 1 &&
       strcmp(last, "run --tag-output -- python t.py") == 0,
       "--check: the dlrun line found, against the # Profile: line's");
    ok(wn == 1, "  and its node");
    put(path, "#!/bin/sh\necho hi\n");
    said[0] = '\0';
    ok(scriptcheck_file(path, &s, NULL, fake_parse, NULL, &n, &got,
                        &wn) ==
       EXIT_USAGE && strstr(said, ": no line runs dlrun"), "no dlrun line");
    ok(scriptcheck_file(path, &s, "other", fake_parse, NULL, &n, &got,
                        &wn) ==
       EXIT_USAGE && strstr(said, "no profile 'other'"), "an unknown profile");
    unlink(path);
    ok(scriptcheck_file(path, &s, NULL, fake_parse, NULL, &n, &got,
                        &wn) ==
       EXIT_USAGE && strstr(said, "--check /tmp/t_scriptcheck."),
       "a missing file");
}

int main(void)
{
    struct site_profile p;

    say_set_sink(keep, NULL);
    node(&p);
    placed(&p);
    job(&p);
    file(&p);
    return tap_done();
}
