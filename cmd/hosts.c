/* hosts.c - `dlrun hosts`: expand, fold and count Slurm hostlists, the
 * way `scontrol show hostnames` and `scontrol show hostlist` do, without
 * needing Slurm. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "where/hostlist.h"
#include "util/optparse.h"
#include "util/readall.h"

static const char usage[] =
    "usage: dlrun hosts expand LIST       one host name per line\n"
    "       dlrun hosts count LIST        the number of host names\n"
    "       dlrun hosts fold [NAME...|-]  the names folded into one hostlist\n"
    "\n"
    "LIST is a Slurm hostlist such as rack[1-2]-n[01-04],login1: the names,\n"
    "their order and their duplicates are those `scontrol show hostnames`\n"
    "prints.  fold takes the names as arguments (each may itself be a list)\n"
    "or, with - or none, from stdin separated by whitespace or commas, and\n"
    "prints what `scontrol show hostlist` prints for those names: n1,n2,n3\n"
    "folds to n[1-3]; order and duplicates are kept.\n"
    "\n"
    "Exit status: 0 done, 2 bad usage or a bad hostlist (with a message).\n";

/* Flush stdout and say so if the names could not all be written. */
static int finish_output(void)
{
    if (fflush(stdout) != 0 || ferror(stdout))
        return cmd_fail(EXIT_FAIL, "hosts: writing the output: %s",
                        strerror(errno));
    return EXIT_OK;
}

static int expand_or_count(const char *action, const char *list)
{
    struct err err = { "" };
    char **hosts = NULL;
    size_t n = 0;

    if (hostlist_expand(list, &hosts, &n, &err) < 0)
        return cmd_fail(EXIT_USAGE, "%s", err.msg);
    if (strcmp(action, "count") == 0)
        printf("%zu\n", n);
    for (size_t i = 0; strcmp(action, "expand") == 0 && i < n; i++)
        puts(hosts[i]);
    hostlist_free(hosts, n);
    return finish_output();
}

/* All of stdin as one list.  Any whitespace (and NUL) separates names
 * here, though Slurm's lists take only spaces, tabs and newlines: a name
 * read from a file ends at its \r too. */
static char *read_stdin(struct err *err)
{
    size_t len = 0;
    /* the bound as before: the text and its NUL stay below the cap */
    char *buf = read_all(stdin, HOSTLIST_MAX_BYTES - 2, &len);

    if (!buf && errno == EFBIG) {
        err_set(err, "hosts fold: more than %d MiB on stdin",
                HOSTLIST_MAX_BYTES >> 20);
        return NULL;
    }
    if (!buf) {
        err_set(err, "hosts fold: reading stdin failed");
        return NULL;
    }
    for (size_t i = 0; i < len; i++)
        if (strchr(" \t\n\r\v\f", buf[i]) || buf[i] == '\0')
            buf[i] = ' ';
    return buf;
}

/* Append the names of list to *all (*n of them, *bytes long), holding the
 * whole to the caps of one list. */
static int gather(const char *list, char ***all, size_t *n, size_t *bytes,
                  struct err *err)
{
    char **hosts = NULL, **grown = NULL;
    size_t k = 0;
    int rc = -1;

    if (hostlist_expand(list, &hosts, &k, err) < 0)
        goto out;
    for (size_t i = 0; i < k; i++)
        *bytes += strlen(hosts[i]) + 1;
    if (k > HOSTLIST_MAX_NAMES - *n || *bytes > HOSTLIST_MAX_BYTES) {
        err_set(err, "hosts fold: more than %d names (or %d MiB of them) in "
                "all", HOSTLIST_MAX_NAMES, HOSTLIST_MAX_BYTES >> 20);
        goto out;
    }
    if (k && !(grown = realloc(*all, (*n + k) * sizeof **all))) {
        err_set(err, "hosts fold: out of memory");
        goto out;
    }
    if (k) {
        memcpy(grown + *n, hosts, k * sizeof *hosts);
        *all = grown;
        *n += k;
        k = 0;
    }
    rc = 0;
out:
    hostlist_free(hosts, k);
    return rc;
}

/* fold NAME... (argc of them), or stdin with none or "-". */
static int fold(int argc, char **argv)
{
    struct err err = { "" };
    char **names = NULL, *input = NULL, *folded = NULL;
    size_t n = 0, bytes = 0;
    int rc = EXIT_USAGE;

    for (int i = 0; argc > 1 && i < argc; i++)
        if (strcmp(argv[i], "-") == 0) {
            err_set(&err, "hosts fold: - (stdin) goes alone, without names");
            goto out;
        }
    if (argc == 0 || (argc == 1 && strcmp(argv[0], "-") == 0)) {
        if (!(input = read_stdin(&err)) ||
            gather(input, &names, &n, &bytes, &err) < 0)
            goto out;
    }
    for (int i = 0; !input && i < argc; i++)
        if (gather(argv[i], &names, &n, &bytes, &err) < 0)
            goto out;
    if (!(folded = hostlist_fold(names, n, &err)))
        goto out;
    puts(folded);
    rc = finish_output();
out:
    if (rc == EXIT_USAGE)
        cmd_fail(rc, "%s", err.msg);
    hostlist_free(names, n);
    free(input);
    free(folded);
    return rc;
}

static const struct optp_opt hosts_opts[] = {
    { "h", 'h', 0, 0, 0, NULL },
    { "help", 'h', 0, 0, 0, NULL },
    { NULL, 0, 0, 0, 0, NULL },
};

/* -h, --help: the only options. */
static int hosts_option(void *ctx, const struct optp_hit *h)
{
    (void)ctx;
    (void)h;
    fputs(usage, stdout);
    return 1;
}

int cmd_hosts(int argc, char **argv)
{
    static const struct optp p = { hosts_opts, "hosts", 0, OPTP_PERMUTE,
                                   NULL };
    const char *action;
    int first = argc, rc = optp_parse(&p, argc, argv, &first, hosts_option,
                                      NULL);

    if (rc != 0)
        return rc == 1 ? finish_output() : rc;
    action = first < argc ? argv[first] : "";
    if (strcmp(action, "expand") == 0 || strcmp(action, "count") == 0) {
        if (argc - first != 2)
            return cmd_fail(EXIT_USAGE, "hosts %s: give one LIST (quote it, "
                            "or join several with commas)", action);
        return expand_or_count(action, argv[first + 1]);
    }
    if (strcmp(action, "fold") == 0)
        return fold(argc - first - 1, argv + first + 1);
    return cmd_fail(EXIT_USAGE, "hosts: say expand, fold or count; see dlrun "
                    "hosts --help");
}
