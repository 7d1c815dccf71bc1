/* script_check.c - dlrun run's own option parser (cmd/options.c) handed
 * to lib/scripts/scriptcheck.h, which checks a job script's dlrun line
 * with it before the job waits in a queue; and `dlrun script --check
 * FILE`'s one line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "options.h"
#include "script.h"
#include "scripts/scriptcheck.h"
#include "util/strv.h"

void script_line_of(const struct options *o, struct dlrun_line *l)
{
    l->bind = o->bind;
    l->bind_given = o->bind_given;
    l->per_node = o->plan.per_node;
    l->ranks = o->plan.ranks;
    l->nodes = o->plan.nodes;
}

int script_parse_line(void *ctx, const struct strv *words,
                      const char *context, struct dlrun_line *out)
{
    struct options o;
    char **argv = calloc(words->n + 1, sizeof *argv), cx[4200];
    int argc = (int)words->n, rc;

    (void)ctx;
    if (!argv)
        return cmd_fail(EXIT_FAIL, "out of memory");
    memset(&o, 0, sizeof o);
    /* a copy of the pointers, as options_parse rewrites -np */
    memcpy(argv, words->v, (words->n + 1) * sizeof *argv);
    snprintf(cx, sizeof cx, "%sthe script's dlrun line: ", context);
    cmd_fail_context(cx);
    rc = options_parse(argc, argv, &o, "");
    cmd_fail_context(NULL);
    if (rc == 1)
        rc = cmd_fail(EXIT_USAGE, "%sthe script's dlrun line asks for "
                      "--help: remove it from dlrun-options", context);
    else if (rc != 0)
        rc = EXIT_USAGE;
    /* the "--" before the program ends the options: a word before it
     * that is not an option would be taken for the program */
    else if (o.prog < 2 || strcmp(argv[o.prog - 1], "--") != 0)
        rc = cmd_fail(EXIT_USAGE, "%sthe script's dlrun line: '%s' is not "
                      "a dlrun option (dlrun-options and --dlrun-arg take "
                      "dlrun run's options, see dlrun run --help)", context,
                      o.prog < argc ? argv[o.prog] : "?");
    else
        script_line_of(&o, out);
    free(argv);
    options_free(&o);
    return rc;
}

int script_check_file(const char *path, const struct sites *s,
                      const char *profile)
{
    const struct site_profile *p = NULL;
    int n = 0, with_node = 0;
    int rc = scriptcheck_file(path, s, profile, script_parse_line, NULL, &n,
                              &p, &with_node);

    if (rc != EXIT_OK)
        return rc;
    printf("%s: %d dlrun line%s checked%s%s%s\n", path, n, n == 1 ? "" : "s",
           p ? " against profile " : "", p ? p->name : "",
           with_node ? " and its node" : "");
    return EXIT_OK;
}
