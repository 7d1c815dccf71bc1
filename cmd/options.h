/* options.h - the options shared by run, env and plan. */
#ifndef DLRUN_OPTIONS_H
#define DLRUN_OPTIONS_H

#include "alloc.h"
#include "bind.h"
#include "plan.h"
#include "rdv.h"

struct options {
    struct alloc_request alloc;
    struct plan_request plan;
    struct rdv_opts rdv;
    int keep_env;
    int json;
    int rank;               /* --rank (env), -1 when not given */
    int tag_output;         /* --tag-output, -l/--label */
    const char *output_dir; /* --output-dir */
    int *ranks_filter;      /* --ranks-filter (owned), nfilter entries */
    int nfilter;
    int kill_timeout_ms;    /* --kill-timeout, default 10 s */
    int max_restarts;       /* --max-restarts */
    struct bind_opts bind;  /* --map-by, --bind-to, --gpu-bind */
    int bind_given;         /* any of them was given */
    int report_bindings;    /* --report-bindings */
    const char *topology;   /* --topology FILE.xml|synthetic:..., or NULL */
    const char *bind_arg[3];    /* the --map-by, --bind-to, --gpu-bind texts */
    const char *summary;    /* --summary FILE */
    char **exports;         /* -x entries (owned array, borrowed strings) */
    int nexports;
    int prog;               /* index in argv of the program, argc if none */
};

/* Parse argv (argv[0] is the subcommand name).  Returns 0, 1 when help
 * was printed (exit 0), or the exit code 2 after printing the error.
 * usage is the subcommand's help text. */
int options_parse(int argc, char **argv, struct options *o, const char *usage);

void options_free(struct options *o);

/* The options' help, shared by the usage texts of run, env and plan. */
extern const char options_help[];

#endif
