/* t_template.c - the {{...}} templates (lib/scripts/template.c) and the
 * names a job gives its template (lib/scripts/jobscript.c).  Shell quoting
 * is tested in util/t_shquote.c, the job-script checks in
 * scripts/t_jobspec.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scripts/jobscript.h"
#include "scripts/jobspec.h"
#include "tap.h"
#include "scripts/template.h"

static const char *const two[] = { "a", "b c", NULL };
static const char *const none[] = { NULL };

static const struct tvar vars[] = {
    { "name", "world", NULL },
    { "empty", "", NULL },
    { "unset", NULL, NULL },
    { "list", NULL, two },
    { "nolist", NULL, none },
};

/* want: the output; NULL when refused with err_has. */
struct row {
    const char *text, *want, *err_has;
};

static const struct row rows[] = {
    { "hello {{name}}!", "hello world!", NULL },
    { "{{ name }}", "world", NULL },
    { "no tags", "no tags", NULL },
    { "", "", NULL },
    { "[{{empty}}][{{unset}}]", "[][]", NULL },
    { "{{list}}", "a b c", NULL },
    { "{{#list}}<{{.}}>{{/list}}", "<a><b c>", NULL },
    { "{{#nolist}}x{{/nolist}}y", "y", NULL },
    { "{{^nolist}}none{{/nolist}}", "none", NULL },
    { "{{^list}}none{{/list}}", "", NULL },
    { "{{#name}}={{.}}={{/name}}", "=world=", NULL },
    { "{{#empty}}x{{/empty}}{{^empty}}y{{/empty}}", "y", NULL },
    { "{{#unset}}x{{/unset}}{{^unset}}y{{/unset}}", "y", NULL },
    /* a section tag alone on its line takes the line */
    { "a\n{{#list}}\n- {{.}}\n{{/list}}\nb\n", "a\n- a\n- b c\nb\n", NULL },
    { "a\n  {{#name}}  \nx\n\t{{/name}}\nb", "a\nx\nb", NULL },
    { "a\n{{! a comment\nover lines }}\nb\n", "a\nb\n", NULL },
    { "a {{! inline }}b", "a b", NULL },
    /* a variable tag never takes its line */
    { "a\n{{empty}}\nb", "a\n\nb", NULL },
    /* nested: the inner name is looked up by name, {{.}} is innermost */
    { "{{#list}}{{#name}}{{.}}{{/name}}{{/list}}", "worldworld", NULL },
    { "{ {name} } {name}", "{ {name} } {name}", NULL },
    { "x }} y", "x }} y", NULL },
    /* refused, with the position of the tag */
    { "line\n  {{nope}}", NULL, "t.in:2:3: unknown name 'nope'" },
    { "{{#nope}}{{/nope}}", NULL, "t.in:1:1: unknown name 'nope'" },
    { "ab {{name", NULL, "t.in:1:4: '{{' is never closed" },
    { "{{#list}}\n{{#name}}\n{{/list}}", NULL,
      "t.in:3:1: {{/list}} does not close {{#name}} of line 2" },
    { "{{/list}}", NULL, "t.in:1:1: {{/list}} closes no section" },
    { "x\n{{^list}}", NULL, "t.in:2:1: {{^list}} is never closed" },
    { "{{}}", NULL, "t.in:1:1: a tag needs a name" },
    { "{{a b}}", NULL, "t.in:1:1: bad tag name 'a b'" },
    { "{{$(rm -rf /)}}", NULL, "bad tag name" },
    { "{{.}}", NULL, "t.in:1:1: {{.}} outside a {{#list}} section" },
    { "{{#.}}x{{/.}}", NULL, "t.in:1:1: bad tag name '.'" },
};

static void test_rows(void)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct row *r = &rows[i];
        struct err err = { "" };
        struct template *t = template_parse(r->text, "t.in", &err);
        char *got = t ? template_render(t, vars, 5, &err) : NULL;
        char what[200];

        snprintf(what, sizeof what, "template '%.60s'", r->text);
        for (char *p = what; *p; p++)   /* one TAP line */
            if (*p == '\n' || *p == '\t')
                *p = '~';
        if (r->want) {
            if (!is_str(got, r->want, what))
                printf("#   err: %s\n", err.msg);
        } else if (!ok(!got && strstr(err.msg, r->err_has), what)) {
            printf("#   err '%s', want '%s'\n", err.msg, r->err_has);
        }
        free(got);
        template_free(t);
    }
}

static void test_deep_and_big(void)
{
    char text[4096] = "", big[64];
    struct err err = { "" };
    struct template *t;
    char *got;

    for (int i = 0; i < 17; i++)
        strcat(text, "{{#name}}");
    t = template_parse(text, "t.in", &err);
    ok(!t && strstr(err.msg, "nested deeper than 16"), "17 nested sections refused");
    template_free(t);
    /* 2^10 copies of a 2^10-byte text pass 1 MiB: refused, not grown */
    text[0] = '\0';
    for (int i = 0; i < 10; i++)
        strcat(text, "{{#list}}");
    for (int i = 0; i < 16; i++)
        strcat(text, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
    for (int i = 0; i < 10; i++)
        strcat(text, "{{/list}}");
    t = template_parse(text, "t.in", &err);
    got = t ? template_render(t, vars, 5, &err) : NULL;
    snprintf(big, sizeof big, "over %d KiB", TEMPLATE_MAX_OUTPUT >> 10);
    ok(t && !got && strstr(err.msg, big), "output past 1 MiB refused");
    free(got);
    template_free(t);
}

static void test_jobscript(void)
{
    static const char *const cmd[] = { "python", "a b", "$x", NULL };
    static const char *const env[] = { "A=x y", "B=", NULL };
    struct jobspec j = { .sched = sched_find("slurm"), .nodes = 2, .gpus_per_node = 4,
                         .command = cmd, .env = env, .time_secs = 3661 };
    struct err err = { "" };
    char *got = jobscript_render(&j, "{{nodes}} {{ntasks}} {{time}} "
                                 "{{time_hm}}|{{dlrun_line}}|{{#env}}{{.}};{{/env}}",
                                 "t.in", &err);

    is_str(got, "2 2 01:01:01 01:02|dlrun --nproc-per-node 4 -- python "
           "'a b' '$x'|A='x y';B='';", "job names and quoting");
    free(got);
    j.per_gpu = 1;
    j.cores_per_node = 40;
    got = jobscript_render(&j, "{{tasks_per_node}} {{ntasks}} "
                           "{{cpus_per_task}}|{{dlrun_line}}", "t.in", &err);
    is_str(got, "4 8 10|dlrun -- python 'a b' '$x'", "per-gpu: 4 tasks a node");
    free(got);
    j.gpus_per_node = 0;
    got = jobscript_render(&j, "x", "t.in", &err);
    ok(!got && strstr(err.msg, "needs --gpus-per-node"), "per-gpu without GPUs refused");
    j.per_gpu = 0;
    j.mpirun = 1;
    got = jobscript_render(&j, "x", "t.in", &err);
    ok(!got && strstr(err.msg, "launcher mpirun is for PBS, NQSV, LSF and PJM"),
       "mpirun under Slurm refused");
    j.mpirun = 0;
    j.requeue = 1;
    got = jobscript_render(&j, "x", "t.in", &err);
    ok(!got && strstr(err.msg, "--requeue needs the signal"), "requeue without a signal refused");
    free(got);
}

/* PBS, NQSV, LSF: the one dlrun (the head) by default, mpirun on request */
static void test_launchers(void)
{
    static const char *const cmd[] = { "python", "a b", NULL };
    static const char *const env[] = { "NCCL_DEBUG=INFO", "B=", NULL };
    static const char *const args[] = { "--map-by", "ppr:2:socket", NULL };
    struct jobspec j = { .sched = sched_find("pbs"), .nodes = 2, .gpus_per_node = 4,
                         .command = cmd, .env = env, .dlrun_args = args };
    const char *text = "{{launcher}} [{{launcher_dlrun}}] [{{launcher_mpirun}}]"
                       "|{{dlrun_line}}";
    struct err err = { "" };
    char *got = jobscript_render(&j, text, "t.in", &err);

    is_str(got, "dlrun [1] []|dlrun --alloc pbs --nproc-per-node 4 "
           "-x PATH ${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} "
           "${PYTHONPATH+-x PYTHONPATH} "
           "-x NCCL_DEBUG -x B --map-by ppr:2:socket -- python 'a b'",
           "pbs: the head reads PBS_NODEFILE, passes PATH and the env on "
           "(by name: no value on a command line)");
    free(got);
    j.per_gpu = 1;
    j.sched = sched_find("lsf");
    j.env = NULL;
    got = jobscript_render(&j, "{{tasks_per_node}}|{{dlrun_line}}", "t.in", &err);
    is_str(got, "4|dlrun --alloc lsf --nproc-per-node 4 -x PATH "
           "${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} "
           "${PYTHONPATH+-x PYTHONPATH} "
           "--map-by ppr:2:socket -- python 'a b'",
           "lsf per-gpu: 4 slots a node, the head starts 4 ranks on each");
    free(got);
    j.mpirun = 1;
    j.sched = sched_find("nqsv");
    got = jobscript_render(&j, text, "t.in", &err);
    is_str(got, "mpirun [] [1]|dlrun --map-by ppr:2:socket -- python 'a b'",
           "nqsv mpirun per-gpu: each task a rank, as before");
    free(got);
    j.per_gpu = 0;
    j.gpus_per_node = 0;
    j.mpirun = 0;
    j.sched = sched_find("slurm");
    got = jobscript_render(&j, "{{launcher}}|{{dlrun_line}}", "t.in", &err);
    is_str(got, "dlrun|dlrun --map-by ppr:2:socket -- python 'a b'",
           "slurm: no --alloc, no -x (srun passes the environment)");
    free(got);
}

int main(void)
{
    test_rows();
    test_deep_and_big();
    test_jobscript();
    test_launchers();
    return tap_done();
}
