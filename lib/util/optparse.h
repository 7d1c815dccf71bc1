/* optparse.h - the one option parser of every subcommand: a table of
 * option words (declarative data) and one loop that reads argv with it,
 * saying what is wrong in one line (an unknown word gets the closest known
 * one: "did you mean --timeout?").
 *
 * A word is read whole: "-np" is the entry "np", never -n with p; a long
 * name takes one dash or two (-host, --hosts); "--opt=V", "--opt V",
 * "-o V" and, for a one-letter entry that takes a value, "-oV" and "-o=V"
 * all work; '_' reads as '-' (torchrun's --nproc_per_node); "--" ends the
 * options.  No abbreviations: a prefix gets a did-you-mean instead.
 *
 *     static const struct optp_opt opts[] = {
 *         { "timeout", 't', 1, 0, 0, NULL },
 *         { "h", 'h', 0, 0, 0, NULL }, { "help", 'h', 0, 0, 0, NULL },
 *         { NULL, 0, 0, 0, 0, NULL },
 *     };
 *     static const struct optp p = { opts, "kv", 0, OPTP_PERMUTE, NULL };
 *     rc = optp_parse(&p, argc, argv, &first, one_option, &args);
 */
#ifndef DLRUN_OPTPARSE_H
#define DLRUN_OPTPARSE_H

/* An entry's flags. */
enum {
    OPTP_REFUSE = 1,    /* known but refused: its note is said (exit 2),
                           after its values are taken; never suggested */
    OPTP_MAYBE = 2,     /* nargs 1, but the next word is its value only when
                           it is one of the note's comma-separated words (or
                           with --opt=V); else the entry comes with no value
                           (dlrun's --mpi MODE, horovodrun's --mpi flag) */
    OPTP_USER = 256     /* from here on: the caller's own bits, untouched */
};

/* One option word. */
struct optp_opt {
    const char *name;   /* without dashes, '-' between words; one letter is
                           a short option; NULL ends the table */
    int code;           /* what the caller's function switches on */
    int nargs;          /* values: 0, 1 or 2 (-mca K V; "K=V" in one word
                           is both) */
    unsigned dialects;  /* where this spelling holds (struct optp's
                           dialect); 0: everywhere */
    unsigned flags;     /* OPTP_* */
    const char *note;   /* OPTP_REFUSE: the line said; OPTP_MAYBE: the
                           values; else NULL */
};

/* A parser's configuration (all borrowed). */
enum {
    OPTP_PERMUTE = 1,       /* operands may come between options: argv is
                               reordered, options first (dlrun kv get K
                               --timeout 5) */
    OPTP_DASH_OPERANDS = 2  /* a one-dash word that is no entry is an
                               operand (kv's values: -5, -) */
};
/* A subcommand whose words for these two (dlrun script's) are older than
 * this parser says them itself (struct optp's fail): */
enum {
    OPTP_UNKNOWN = 1,       /* no entry: h->opt NULL, near the closest
                               known name or NULL */
    OPTP_NO_VALUE = 2       /* h->opt's value is missing */
};
struct optp_hit;
struct optp {
    const struct optp_opt *opts;    /* the table */
    const char *cmd;        /* the subcommand, for "(dlrun CMD --help)" */
    unsigned dialect;       /* the entries whose dialects have these bits
                               (and those with none) apply */
    unsigned flags;         /* OPTP_PERMUTE, OPTP_DASH_OPERANDS */
    /* NULL: the parser says the line; else this says it (ctx: optp_parse's)
     * and returns the exit code */
    int (*fail)(void *ctx, int why, const struct optp_hit *h,
                const char *near);
};

/* One option found, handed to the caller's function. */
struct optp_hit {
    const struct optp_opt *opt;     /* its entry (borrowed) */
    char name[64];          /* the word's name: no dashes, no "=V", '_' as
                               '-' ("N4" for -N4) */
    char shown[80];         /* the word as typed, without "=V" (messages) */
    char *v[2];             /* its values, borrowed from argv; NULL where
                               none (an OPTP_MAYBE entry without one) */
};

/* Called for each option in order: 0 to go on, or a value that ends the
 * parse and is returned (1 for "help was shown", an exit code; -1 after
 * saying why: EXIT_USAGE). */
typedef int (*optp_fn)(void *ctx, const struct optp_hit *hit);

/* Read argv[1..argc) with p, calling fn(ctx, hit) for each option.  0 with
 * *first the index of the first operand (argc when none; after a "--");
 * else fn's non-zero value, or EXIT_USAGE after saying why in one line
 * (lib/util/say.h): an unknown word (with the closest known one), a
 * missing value, a value given to a word that takes none, a refused word.
 * Under OPTP_PERMUTE argv's words are reordered: the options (and a "--")
 * first, then the operands in their order; otherwise argv is untouched and
 * the options end at the first operand. */
int optp_parse(const struct optp *p, int argc, char **argv, int *first,
               optp_fn fn, void *ctx);

/* The entry named name (normalized as struct optp_hit's) in dialect d
 * (0: any), or NULL; borrowed from opts. */
const struct optp_opt *optp_find(const struct optp_opt *opts,
                                 const char *name, unsigned d);

/* The known name closest to name, when close enough to be a typo (a few
 * letters off, or a prefix of 3 or more), else NULL; borrowed from opts. */
const char *optp_suggest(const struct optp_opt *opts, const char *name);

/* The one integer parser: a whole number from min to max in s into *out.
 * 0, or -1 after saying "OPT S: expected a whole number from MIN to MAX"
 * (opt: the option as the user knows it, "--port"). */
int optp_int(const char *opt, const char *s, int min, int max, int *out);

#endif
