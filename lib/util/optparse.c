/* optparse.c - one option parser for every subcommand (optparse.h). */
#include "util/optparse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/editdist.h"
#include "util/say.h"

/* The option word as typed, without its "=value". */
static void word_name(const char *w, char *out, size_t n)
{
    size_t len = strcspn(w, "=");

    snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), w);
}

const struct optp_opt *optp_find(const struct optp_opt *opts,
                                 const char *name, unsigned d)
{
    for (; opts->name; opts++)
        if ((!d || !opts->dialects || (opts->dialects & d)) &&
            strcmp(opts->name, name) == 0)
            return opts;
    return NULL;
}

const char *optp_suggest(const struct optp_opt *opts, const char *name)
{
    const char *best = NULL;
    size_t bestd = 99, len = strlen(name);

    for (; opts->name; opts++) {
        size_t d;

        if (strlen(opts->name) < 3 || (opts->flags & OPTP_REFUSE))
            continue;
        d = editdist(name, opts->name);
        /* a prefix (--nproc) is what argparse would have taken */
        if (strncmp(opts->name, name, len) == 0 && len >= 3)
            d = 1;
        if (d < bestd) {
            bestd = d;
            best = opts->name;
        }
    }
    return bestd <= (len > 6 ? 2u : 1u) ? best : NULL;
}

int optp_int(const char *opt, const char *s, int min, int max, int *out)
{
    char *end = NULL;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        return say_fail(-1, "%s %s: expected a whole number from %d to %d",
                        opt, s, min, max);
    *out = (int)v;
    return 0;
}

/* The entry for the word w (h->name: its normalized name) and where a
 * letter's value is attached (-n4, -xFOO=1), else *attached NULL. */
static const struct optp_opt *find_word(const struct optp *p, const char *w,
                                        struct optp_hit *h, char **attached)
{
    const char *body = w + (w[1] == '-' ? 2 : 1);
    const struct optp_opt *d;
    char one[2] = { body[0], '\0' };

    word_name(body, h->name, sizeof h->name);
    for (char *c = h->name; *c; c++)
        if (*c == '_')
            *c = '-';
    *attached = NULL;
    d = optp_find(p->opts, h->name, p->dialect);
    if (d || w[1] == '-' || !body[0] || !body[1])
        return d;
    d = optp_find(p->opts, one, p->dialect);
    if (!d || d->nargs != 1)
        return NULL;
    *attached = (char *)body + 1 + (body[1] == '=');
    return d;
}

/* s is one of list's comma-separated words. */
static int is_choice(const char *list, const char *s)
{
    size_t n = s ? strlen(s) : 0;

    for (const char *at = list; s && at && *at; at += strcspn(at, ",")) {
        at += *at == ',';
        if (strncmp(at, s, n) == 0 && (at[n] == ',' || !at[n]))
            return 1;
    }
    return 0;
}

/* The values of d from argv at *i (advanced past them): 0, -1 when one is
 * missing, or EXIT_USAGE after saying why. */
static int take_values(const struct optp_opt *d, int argc, char **argv,
                       int *i, char *attached, struct optp_hit *h)
{
    char *w = argv[*i], *eq = attached ? attached : strchr(w, '=');

    (*i)++;
    if (d->nargs == 0) {
        if (eq && !attached)
            return say_fail(EXIT_USAGE, "%s takes no value (got '%s')",
                            h->shown, eq + 1);
        return 0;
    }
    if ((d->flags & OPTP_MAYBE) && !eq &&
        !is_choice(d->note, *i < argc ? argv[*i] : NULL))
        return 0;   /* the entry without a value */
    h->v[0] = eq ? eq + (attached ? 0 : 1) : *i < argc ? argv[(*i)++] : NULL;
    /* -genv NAME VALUE, or NAME=VALUE in one word */
    if (h->v[0] && d->nargs == 2 && !strchr(h->v[0], '='))
        h->v[1] = *i < argc ? argv[(*i)++] : NULL;
    return !h->v[0] || (d->nargs == 2 && !strchr(h->v[0], '=') && !h->v[1])
           ? -1 : 0;
}

/* Say that h's word is unknown (near: the closest known name, or NULL) or
 * that its value is missing; the exit code. */
static int refuse(const struct optp *p, void *ctx, int why,
                  const struct optp_hit *h, const char *near)
{
    if (p->fail)
        return p->fail(ctx, why, h, near);
    if (why == OPTP_NO_VALUE)
        return say_fail(EXIT_USAGE, "missing value for '%s' (it takes %s)",
                        h->shown, h->opt->nargs == 2 ? "NAME VALUE"
                                                     : "a value");
    if (near)
        return say_fail(EXIT_USAGE, "unknown option '%s'; did you mean %s%s? "
                        "(dlrun %s --help)", h->shown, near[1] ? "--" : "-",
                        near, p->cmd);
    return say_fail(EXIT_USAGE, "unknown option '%s' (dlrun %s --help)",
                    h->shown, p->cmd);
}

/* The longer entry that w's body begins with when w is a one-letter
 * entry with its value attached (-np2 read as -n p2), else NULL: a user
 * who typed -np2 meant -np 2, and "-np p2" names a value never typed. */
static const struct optp_opt *glued_long(const struct optp *p, const char *w)
{
    const char *body = w + 1;
    const struct optp_opt *best = NULL;

    for (const struct optp_opt *o = p->opts; o->name; o++) {
        size_t n = strlen(o->name);

        if (n >= 2 && o->nargs >= 1 && strncmp(body, o->name, n) == 0 &&
            body[n] && body[n] != '=' &&
            (!p->dialect || !o->dialects || (o->dialects & p->dialect)) &&
            (!best || n > strlen(best->name)))
            best = o;
    }
    return best;
}

/* The option word at argv[*i] and its values into h; *i moves past them.
 * 0, -1 when the word is an operand (OPTP_DASH_OPERANDS), or EXIT_USAGE
 * after saying why. */
static int read_option(const struct optp *p, void *ctx, int argc,
                       char **argv, int *i, struct optp_hit *h)
{
    char *attached = NULL;
    const char *w = argv[*i];
    int rc;

    memset(h, 0, sizeof *h);
    word_name(w, h->shown, sizeof h->shown);
    h->opt = find_word(p, w, h, &attached);
    if (!h->opt && (p->flags & OPTP_DASH_OPERANDS) && w[1] != '-')
        return -1;
    if (!h->opt)
        return refuse(p, ctx, OPTP_UNKNOWN, h, optp_suggest(p->opts, h->name));
    if (attached && w[1] != '-' && glued_long(p, w)) {
        const struct optp_opt *g = glued_long(p, w);

        return say_fail(EXIT_USAGE, "unknown option '%s'; did you mean "
                        "-%s %s? (dlrun %s --help)", w, g->name,
                        w + 1 + strlen(g->name), p->cmd);
    }
    rc = take_values(h->opt, argc, argv, i, attached, h);
    if (rc < 0)
        return refuse(p, ctx, OPTP_NO_VALUE, h, NULL);
    if (rc == 0 && (h->opt->flags & OPTP_REFUSE))
        rc = say_fail(EXIT_USAGE, "%s", h->opt->note);
    return rc;
}

/* Move argv[from..end) (an option and its values, at most 3 words) to
 * argv[to], the operands in argv[to..from) after them. */
static void move_before(char **argv, int to, int from, int end)
{
    char *words[3];
    int n = end - from;

    if (to == from || n > 3)
        return;
    memcpy(words, argv + from, (size_t)n * sizeof *words);
    memmove(argv + to + n, argv + to, (size_t)(from - to) * sizeof *argv);
    memcpy(argv + to, words, (size_t)n * sizeof *words);
}

int optp_parse(const struct optp *p, int argc, char **argv, int *first,
               optp_fn fn, void *ctx)
{
    int i = 1, ops = 1, rc = 0, permute = p->flags & OPTP_PERMUTE;
    struct optp_hit h;

    while (i < argc && rc == 0) {
        int at = i;

        if (strcmp(argv[i], "--") == 0) {
            move_before(argv, ops++, i, i + 1);
            break;
        }
        rc = argv[i][0] != '-' || !argv[i][1] ? -1 :
             read_option(p, ctx, argc, argv, &i, &h);
        if (rc < 0 && !permute)
            break;          /* the first operand */
        if (rc < 0) {
            rc = 0;
            i = at + 1;     /* an operand: gathered after the options */
            continue;
        }
        if (rc == 0 && (rc = fn(ctx, &h)) < 0)
            rc = EXIT_USAGE;    /* fn said why */
        move_before(argv, ops, at, i);
        ops += i - at;
    }
    *first = ops;
    return rc < 0 ? 0 : rc;
}
