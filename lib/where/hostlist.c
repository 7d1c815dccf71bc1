/* hostlist.c - expand and fold Slurm hostlists; parse tasks-per-node.
 *
 * Written to Slurm's behaviour as `scontrol show hostnames|hostlist` (Slurm
 * 22.05) shows it; tests/e2e/t_hosts.sh compares the two.  Where Slurm's
 * result is odd but harmless we copy it and say so in a comment; where it
 * invents or drops hosts we refuse (see hostlist.h).
 */
#include "where/hostlist.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Separators between the items of a list, outside brackets only ("n[1,
 * 3]" is one item).  A newline is one, as in a file of names or a list
 * pasted from `scontrol show hostnames` (Slurm 22.05 kept it inside the
 * name, "a\nb" being one host; no host name holds one). */
static const char SEPS[] = " \t\n,";

/* Characters that a name to fold may not hold: they would not read back
 * as the same name (Slurm's prefix comparison also skips any whitespace),
 * and hostlist_expand refuses control characters. */
static const char UNFOLDABLE[] = " \t,[]";

#define SHOW_MAX 72     /* bytes of user text quoted in one message */

/* The names of an expansion so far, within the caps. */
struct names {
    char **v;
    size_t n, cap, bytes;
};

/* One number or lo-hi between brackets.  width pads with zeros: Slurm
 * takes it from the length of the text of lo ("[08-10]" gives 08 09 10). */
struct range {
    unsigned long lo, hi;
    int width;
};

/* One bracket set of an item and the plain text just before it; the last
 * set also carries the text after it (Slurm 23.11: "n[1-2]-ib"). */
struct bset {
    const char *text, *suffix;
    size_t textlen, suffixlen;
    struct range *r;
    size_t nr;
    size_t count;       /* hosts it names, saturating past the caps */
};

/* What a message needs: the list as given, and where the message goes. */
struct ctx {
    const char *spec;
    struct err *err;
    bool quiet;         /* only whether it parses: no message is made */
};

/* How one entry between brackets went wrong. */
enum rcode { R_OK, R_EMPTY, R_NOTNUM, R_NEG, R_BIG, R_DOWN, R_WIDE };

/* One range or lone number of a folded list.  For a name with no number
 * (single) the prefix is the whole name. */
struct frange {
    const char *name;
    size_t plen;
    unsigned long lo, hi;
    int width;
    bool single;
};

/* len bytes of s for a one-line message (err_quote); buf holds
 * SHOW_MAX + 4 bytes. */
static const char *show(char *buf, const char *s, size_t len)
{
    return err_quote(buf, SHOW_MAX, s, len);
}

/* Set err to 'bad hostlist "SPEC": WHAT' and return -1. */
static int bad(const struct ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int bad(const struct ctx *c, const char *fmt, ...)
{
    char what[ERR_MSG_MAX], spec[SHOW_MAX + 4];
    va_list ap;

    if (c->quiet)
        return -1;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return err_set(c->err, "bad hostlist \"%s\": %s",
                   show(spec, c->spec, strlen(c->spec)), what);
}

static size_t count_char(const char *s, size_t len, char ch)
{
    size_t k = 0;

    for (size_t i = 0; i < len; i++)
        k += s[i] == ch;
    return k;
}

/* The trailing digits of s (len bytes) start at *start (len if none).
 * Returns -1 when they make 2^64-1 or more: Slurm keeps the number in an
 * unsigned long and prints the name back from it, so it would change
 * ("n99999999999999999999" comes out as n18446744073709551615). */
static int trailing_number(const char *s, size_t len, size_t *start,
                           unsigned long *num)
{
    size_t d = len;
    unsigned long v = 0;

    while (d > 0 && isdigit((unsigned char)s[d - 1]))
        d--;
    *start = d;
    for (size_t i = d; i < len; i++) {
        unsigned digit = (unsigned)(s[i] - '0');
        if (v > (ULONG_MAX - 1 - digit) / 10)
            return -1;
        v = v * 10 + digit;
    }
    *num = v;
    return 0;
}

/* The item (separator-free stretch) around s[at], for messages. */
static const char *item_at(char *buf, const char *s, size_t at)
{
    size_t b = at, e = at;

    while (b > 0 && !strchr(SEPS, s[b - 1]))
        b--;
    while (s[e] && !strchr(SEPS, s[e]))
        e++;
    return show(buf, s + b, e - b);
}

/* Brackets must pair up without nesting, and control characters other
 * than the separators tab and newline (outside brackets) have no place in
 * a host name.  Slurm guesses otherwise: "n[1-" expands to "n]", "a[1[2]"
 * to "a[12", "a]" stays "a]"; none is a host. */
static int check_chars(const struct ctx *c)
{
    const char *s = c->spec, *open = NULL;
    char buf[SHOW_MAX + 4];

    for (size_t i = 0; s[i]; i++) {
        if (s[i] == '\n' && open)
            return bad(c, "a newline inside the brackets of \"%s\"; write "
                       "a bracket set on one line", show(buf, open,
                       strcspn(open, "]") + (open[strcspn(open, "]")] != 0)));
        if (iscntrl((unsigned char)s[i]) && s[i] != '\t' && s[i] != '\n')
            return bad(c, "control character (byte %d) in \"%s\"; separate "
                       "names with commas or spaces", s[i], item_at(buf, s, i));
        if (s[i] == '[' && open)
            return bad(c, "'[' inside brackets in \"%s\"; brackets do not nest",
                       item_at(buf, s, i));
        if (s[i] == ']' && !open)
            return bad(c, "']' without a '[' before it in \"%s\"; remove it "
                       "or add the '['", item_at(buf, s, i));
        if (s[i] == '[')
            open = s + i;
        else if (s[i] == ']')
            open = NULL;
    }
    if (open)
        return bad(c, "'[' is never closed in \"%s\"; add the ']', as in "
                   "n[1-4]", show(buf, open, strlen(open)));
    return 0;
}

/* Find the next item at *p: it ends at a separator outside brackets.
 * Returns its length (0 at the end) and leaves *p after it. */
static size_t next_item(const char **p, const char **item)
{
    const char *s = *p + strspn(*p, SEPS);
    size_t len = 0;
    bool inside = false;

    for (; s[len] && (inside || !strchr(SEPS, s[len])); len++)
        if (s[len] == '[' || s[len] == ']')
            inside = s[len] == '[';
    *item = s;
    *p = s + len;
    return len;
}

static int out_of_memory(struct err *err)
{
    return err_set(err, "out of memory expanding a hostlist");
}

/* Append a copy of name (len bytes) to nm, within the caps. */
static int names_add(const struct ctx *c, struct names *nm, const char *name,
                     size_t len)
{
    if (nm->n >= HOSTLIST_MAX_NAMES)
        return bad(c, "more than %d names; dlrun takes at most that many "
                   "from one list", HOSTLIST_MAX_NAMES);
    if (len + 1 > HOSTLIST_MAX_BYTES - nm->bytes)
        return bad(c, "the names add up to more than %d MiB; dlrun takes "
                   "at most that much from one list",
                   HOSTLIST_MAX_BYTES >> 20);
    if (nm->n == nm->cap) {
        size_t cap = nm->cap ? 2 * nm->cap : 16;
        char **v = realloc(nm->v, cap * sizeof *v);
        if (!v)
            return out_of_memory(c->err);
        nm->v = v;
        nm->cap = cap;
    }
    if (!(nm->v[nm->n] = strndup(name, len)))
        return out_of_memory(c->err);
    nm->n++;
    nm->bytes += len + 1;
    return 0;
}

/* An item without brackets is one name, kept as written. */
static int add_plain(const struct ctx *c, const char *item, size_t len,
                     struct names *nm)
{
    char buf[SHOW_MAX + 4];
    size_t start;
    unsigned long num;

    if (trailing_number(item, len, &start, &num) < 0)
        return bad(c, "the number at the end of \"%s\" is too large (the "
                   "limit is %lu)", show(buf, item, len), ULONG_MAX - 1);
    return names_add(c, nm, item, len);
}

/* Read one entry between brackets as Slurm does, with strtoul: "lo",
 * "lo-hi", or "lo-" (Slurm takes it as "lo").  Slurm's liberties are kept:
 * leading blanks and '+' pass and count in the width ("n[1, 3]" gives n1
 * and n03), and before a "-hi" junk after lo goes unseen ("n[1abc-3]" gives
 * n0001..n0003).  s is a modifiable copy. */
static enum rcode parse_range(char *s, struct range *r)
{
    char *dash = strchr(s, '-'), *hi = dash ? dash + 1 : NULL, *end = NULL;

    if (!*s)
        return R_EMPTY;
    if (strchr(s, 'x'))         /* Slurm's multi-dimension boxes */
        return R_NOTNUM;
    if (dash)
        *dash = '\0';
    if (hi && *hi == '-')
        return R_NEG;
    if (strlen(s) > INT_MAX)
        return R_BIG;
    r->width = (int)strlen(s);
    r->lo = strtoul(s, &end, 10);
    if (end == s)
        return R_NOTNUM;
    r->hi = r->lo;
    if (hi && *hi) {
        r->hi = strtoul(hi, &end, 10);
        if (end == hi)
            return R_NOTNUM;
    }
    if (*end)
        return R_NOTNUM;
    if (r->lo == ULONG_MAX || r->hi == ULONG_MAX)
        return R_BIG;           /* Slurm drops hosts numbered 2^64-1 */
    if (r->lo > r->hi)
        return R_DOWN;
    return r->hi - r->lo >= HOSTLIST_MAX_RANGE ? R_WIDE : R_OK;
}

static int clamp(size_t n)
{
    return n > ERR_MSG_MAX ? ERR_MSG_MAX : (int)n;
}

static bool item_valid(const char *item, size_t len);

/* The item with the range at piece turned the right way up ("n[3-1]" ->
 * "n[1-3]"), for the "write ..." of a message; NULL when that is not
 * valid input either (another error in the item) or too long to quote
 * whole (a shortened "..." one would not be valid input). */
static const char *swapped(char *buf, const char *item, size_t ilen,
                           const char *piece, size_t plen)
{
    char tmp[ERR_MSG_MAX];
    const char *dash = memchr(piece, '-', plen);
    size_t before = (size_t)(piece - item), lolen = (size_t)(dash - piece);
    int n = snprintf(tmp, sizeof tmp, "%.*s%.*s-%.*s%.*s", clamp(before),
                     item, clamp(plen - lolen - 1), dash + 1, clamp(lolen),
                     piece, clamp(ilen - before - plen), piece + plen);

    if (n < 0 || n > SHOW_MAX || !item_valid(tmp, (size_t)n))
        return NULL;
    for (int i = 0; i < n; i++)
        if (!isprint((unsigned char)tmp[i]))
            return NULL;        /* a message would show it as '?' */
    return show(buf, tmp, (size_t)n);
}

/* Say what is wrong with the entry at piece (plen bytes inside item). */
static int range_error(const struct ctx *c, enum rcode code, const char *item,
                       size_t ilen, const char *piece, size_t plen,
                       const struct range *r)
{
    char it[SHOW_MAX + 4], pc[SHOW_MAX + 4], fix[SHOW_MAX + 4];
    const char *dash = memchr(piece, '-', plen);
    /* strtoul takes a sign after blanks: "1- -3" is 1 to 2^64-3 */
    bool negative = code == R_NEG ||
        (dash && memchr(dash + 1, '-', plen - (size_t)(dash - piece) - 1));

    if (c->quiet)
        return -1;
    show(it, item, ilen);
    show(pc, piece, plen);
    if (code == R_EMPTY)
        return bad(c, "empty entry between the brackets of \"%s\"; brackets "
                   "hold numbers and ranges, as in n[1-4,7]", it);
    if (code == R_NOTNUM)
        return bad(c, "\"%s\" in \"%s\" is not a number or a range; brackets "
                   "hold numbers and ranges, as in n[1-4,7]", pc, it);
    if (code == R_BIG)
        return bad(c, "a number in \"%s\" is too large (the limit is %lu)",
                   it, ULONG_MAX - 1);
    if (negative)
        return bad(c, "\"%s\" in \"%s\": numbers cannot be negative", pc, it);
    if (code == R_DOWN && swapped(fix, item, ilen, piece, plen))
        return bad(c, "range %s goes down; write %s", pc, fix);
    if (code == R_DOWN)
        return bad(c, "range %s goes down; write it from low to high", pc);
    return bad(c, "range %s names %lu hosts; Slurm allows at most %d in one "
               "range, so split it", pc, r->hi - r->lo + 1, HOSTLIST_MAX_RANGE);
}

/* a + b for host counts, held at one past the name cap so that it cannot
 * overflow (b is at most HOSTLIST_MAX_RANGE). */
static size_t count_add(size_t a, size_t b)
{
    return a + b > HOSTLIST_MAX_NAMES ? HOSTLIST_MAX_NAMES + 1 : a + b;
}

/* Parse the text between one '[' and its ']' (s, len bytes) into b.
 * Entries are split at every comma, so "[1,,2]" and "[1,]" have an empty
 * one, which Slurm refuses. */
static int parse_bset(const struct ctx *c, const char *item, size_t ilen,
                      const char *s, size_t len, struct bset *b)
{
    char *copy = strndup(s, len), *piece = copy;
    int rc = -1;

    b->nr = count_char(s, len, ',') + 1;
    b->r = calloc(b->nr, sizeof *b->r);
    if (!copy || !b->r) {
        out_of_memory(c->err);
        goto out;
    }
    for (size_t i = 0; i < b->nr; i++) {
        size_t plen = strcspn(piece, ",");
        char *next = piece + plen + (piece[plen] == ',');
        enum rcode code;

        piece[plen] = '\0';
        code = parse_range(piece, &b->r[i]);
        if (code != R_OK) {
            range_error(c, code, item, ilen, s + (piece - copy), plen,
                        &b->r[i]);
            goto out;
        }
        b->count = count_add(b->count, b->r[i].hi - b->r[i].lo + 1);
        piece = next;
    }
    rc = 0;
out:
    free(copy);
    return rc;
}

/* Cut an item with k bracket sets into b[0..k): the text before each set,
 * and its ranges. */
static int split_item(const struct ctx *c, const char *item, size_t len,
                      struct bset *b, size_t k)
{
    const char *p = item;

    for (size_t i = 0; i < k; i++) {
        const char *open = memchr(p, '[', len - (size_t)(p - item));
        const char *close = memchr(open, ']', len - (size_t)(open - item));

        b[i].text = p;
        b[i].textlen = (size_t)(open - p);
        if (parse_bset(c, item, len, open + 1, (size_t)(close - open - 1),
                       &b[i]) < 0)
            return -1;
        p = close + 1;
    }
    return 0;
}

/* Slurm refuses a bracket set before the last one that names more than
 * HOSTLIST_MAX_PREFIX hosts.  The sets multiply, so their product plus the
 * names already expanded (have) is held to HOSTLIST_MAX_NAMES here, before
 * any of it is allocated. */
static int check_counts(const struct ctx *c, const char *item, size_t len,
                        const struct bset *b, size_t k, size_t have)
{
    char buf[SHOW_MAX + 4];
    size_t total = 1;

    for (size_t i = 0; i < k; i++) {
        if (i + 1 < k && b[i].count > HOSTLIST_MAX_PREFIX)
            return bad(c, "bracket set %zu of \"%s\" names more than %d "
                       "hosts; Slurm allows at most that many in a set "
                       "before the last", i + 1, show(buf, item, len),
                       HOSTLIST_MAX_PREFIX);
        if (total > HOSTLIST_MAX_NAMES / b[i].count)
            total = HOSTLIST_MAX_NAMES + 1;
        else
            total *= b[i].count;
    }
    if (total > HOSTLIST_MAX_NAMES - have)
        return bad(c, "\"%s\" takes the list past %d names; dlrun takes at "
                   "most that many from one list", show(buf, item, len),
                   HOSTLIST_MAX_NAMES);
    return 0;
}

/* Whether one item (brackets balanced, as check_chars makes them) would
 * expand, with no message made: for the fixes that messages offer. */
static bool item_valid(const char *item, size_t len)
{
    struct err scratch = { "" };
    struct ctx c = { item, &scratch, true };
    size_t k = count_char(item, len, '[');
    struct bset *b = calloc(k ? k : 1, sizeof *b);
    bool valid = b && split_item(&c, item, len, b, k) == 0 &&
                 check_counts(&c, item, len, b, k, 0) == 0;

    for (size_t i = 0; b && i < k; i++)
        free(b[i].r);
    free(b);
    return valid;
}

/* Step to the next name in Slurm's order: the last bracket set turns
 * fastest, then the first, the second, ... the one before the last.
 * (Slurm expands the sets before the last from right to left, each inside
 * the next, so "a[1-2]b[3-4]c[5-6]" gives a1b3c5 a1b3c6 a2b3c5 a2b3c6
 * a1b4c5 ...; with two sets that is plain prefix-major.)  ri and v hold
 * each set's range and number; false once every name has been made. */
static bool advance(const struct bset *b, size_t k, size_t *ri,
                    unsigned long *v)
{
    for (size_t j = 0; j < k; j++) {
        size_t s = j == 0 ? k - 1 : j - 1;

        if (v[s] < b[s].r[ri[s]].hi) {
            v[s]++;
            return true;
        }
        if (ri[s] + 1 < b[s].nr) {
            v[s] = b[s].r[++ri[s]].lo;
            return true;
        }
        ri[s] = 0;
        v[s] = b[s].r[0].lo;
    }
    return false;
}

/* Write the name for the numbers v into buf; returns its length.  size
 * covers the item plus 20 digits per set: a number prints in its width
 * (at most the length of its text) or its digits (at most 20). */
static size_t format_name(char *buf, size_t size, const struct bset *b,
                          size_t k, const size_t *ri, const unsigned long *v)
{
    size_t len = 0;

    for (size_t i = 0; i < k; i++) {
        memcpy(buf + len, b[i].text, b[i].textlen);
        len += b[i].textlen;
        len += (size_t)snprintf(buf + len, size - len, "%0*lu",
                                b[i].r[ri[i]].width, v[i]);
    }
    memcpy(buf + len, b[k - 1].suffix, b[k - 1].suffixlen);
    return len + b[k - 1].suffixlen;
}

/* Add every name that the bracket sets b[0..k) make. */
static int add_product(const struct ctx *c, const struct bset *b, size_t k,
                       size_t size, struct names *nm)
{
    size_t *ri = calloc(k, sizeof *ri);
    unsigned long *v = calloc(k, sizeof *v);
    char *buf = malloc(size);
    int rc = -1;

    if (!ri || !v || !buf) {
        out_of_memory(c->err);
        goto out;
    }
    for (size_t i = 0; i < k; i++)
        v[i] = b[i].r[0].lo;
    do {
        size_t len = format_name(buf, size, b, k, ri, v);

        if (names_add(c, nm, buf, len) < 0)
            goto out;
    } while (advance(b, k, ri, v));
    rc = 0;
out:
    free(ri);
    free(v);
    free(buf);
    return rc;
}

/* Add the names of one item: a plain name, or text with bracket sets and
 * maybe text after the last one, which every name ends with (Slurm 23.11
 * and later: "n[1-2]-ib" is n1-ib,n2-ib; 22.05 refused it). */
static int expand_item(const struct ctx *c, const char *item, size_t len,
                       struct names *nm)
{
    size_t k = count_char(item, len, '[');
    struct bset *b = NULL;
    const char *close;
    int rc = -1;

    if (k == 0)
        return add_plain(c, item, len, nm);
    if (!(b = calloc(k, sizeof *b))) {
        out_of_memory(c->err);
        goto out;
    }
    close = memrchr(item, ']', len);
    b[k - 1].suffix = close + 1;
    b[k - 1].suffixlen = len - (size_t)(close + 1 - item);
    if (split_item(c, item, len, b, k) == 0 &&
        check_counts(c, item, len, b, k, nm->n) == 0)
        rc = add_product(c, b, k, len + 20 * k + 1, nm);
out:
    for (size_t i = 0; b && i < k; i++)
        free(b[i].r);
    free(b);
    return rc;
}

int hostlist_expand(const char *spec, char ***hosts, size_t *n, struct err *err)
{
    struct ctx c = { spec, err, false };
    struct names nm = { 0 };
    const char *p = spec, *item;
    size_t len;
    int rc = -1;

    *hosts = NULL;
    *n = 0;
    if (!spec) {
        err_set(err, "no hostlist given");
        goto out;
    }
    if (check_chars(&c) < 0)
        goto out;
    while ((len = next_item(&p, &item)) > 0)
        if (expand_item(&c, item, len, &nm) < 0)
            goto out;
    *hosts = nm.v;
    *n = nm.n;
    nm.v = NULL;
    nm.n = 0;
    rc = 0;
out:
    hostlist_free(nm.v, nm.n);
    return rc;
}

void hostlist_free(char **hosts, size_t n)
{
    if (!hosts)
        return;
    for (size_t i = 0; i < n; i++)
        free(hosts[i]);
    free(hosts);
}

/* Which character a name to fold may not hold, in words. */
static const char *unfoldable_char(char ch)
{
    if (ch == ' ' || ch == '\t')
        return "whitespace";
    if (ch == ',')
        return "a comma";
    if (ch == '[' || ch == ']')
        return "a bracket";
    return "a control character";
}

/* Check a name to fold and split it into prefix and trailing number, as
 * Slurm's hostname parsing does. */
static int fold_parse(const char *name, struct frange *r, struct err *err)
{
    char buf[SHOW_MAX + 4];
    size_t len = strlen(name), at = 0, start;

    if (!len)
        return err_set(err, "cannot fold an empty host name");
    while (name[at] && !strchr(UNFOLDABLE, name[at]) &&
           !iscntrl((unsigned char)name[at]))
        at++;
    if (name[at])
        return err_set(err, "cannot fold host name \"%s\": a hostlist cannot "
                       "hold %s", show(buf, name, len),
                       unfoldable_char(name[at]));
    if (trailing_number(name, len, &start, &r->lo) < 0 || len - start > INT_MAX)
        return err_set(err, "cannot fold host name \"%s\": its number is too "
                       "large (the limit is %lu)", show(buf, name, len),
                       ULONG_MAX - 1);
    r->name = name;
    r->plen = start;
    r->hi = r->lo;
    r->width = (int)(len - start);
    r->single = start == len;
    return 0;
}

/* How many zeros "%0*lu" puts before num at this width. */
static int pad_zeros(unsigned long num, int width)
{
    int digits = 1;

    while (num /= 10)
        digits++;
    return width > digits ? width - digits : 0;
}

/* Slurm joins numbers of different widths into one range only if one of
 * the widths prints both numbers with the same zeros as before ("n9,n10"
 * -> n[9-10], but "n08,n9" stays n[08,9]), and then takes that width. */
static bool width_equiv(unsigned long n, int *wn, unsigned long m, int *wm)
{
    bool n_same, m_same;

    if (*wn == *wm)
        return true;
    n_same = pad_zeros(n, *wn) == pad_zeros(n, *wm);
    m_same = pad_zeros(m, *wm) == pad_zeros(m, *wn);
    if (!n_same && !m_same)
        return false;
    if (!n_same)
        *wm = *wn;
    else
        *wn = *wm;
    return true;
}

/* Both have numbers and the same prefix: they share a bracket set. */
static bool same_prefix(const struct frange *a, const struct frange *b)
{
    return !a->single && !b->single && a->plen == b->plen &&
           memcmp(a->name, b->name, a->plen) == 0;
}

/* Add r after the ranges v[0..*nr), joined to the last one if Slurm would
 * join them: same prefix, the next number, widths that agree.  Only the
 * last one: Slurm keeps the order and so "n1,n3,n2" folds to n[1,3,2]. */
static void fold_push(struct frange *v, size_t *nr, struct frange r)
{
    struct frange *t = *nr ? &v[*nr - 1] : NULL;

    if (t && same_prefix(t, &r) && t->hi + 1 == r.lo &&
        width_equiv(t->lo, &t->width, r.lo, &r.width))
        t->hi = r.hi;
    else
        v[(*nr)++] = r;
}

/* Print the ranges as Slurm's ranged string: ranges in a row with the same
 * prefix go in one bracket set, and the brackets are left out when the set
 * holds one host ("n1,m" stays as it is). */
static void fold_print(FILE *f, const struct frange *v, size_t nr)
{
    for (size_t i = 0, j; i < nr; i = j) {
        bool brackets;

        for (j = i + 1; j < nr && same_prefix(&v[j - 1], &v[j]); j++)
            ;
        brackets = j - i > 1 || v[i].hi > v[i].lo;
        if (i > 0)
            fputc(',', f);
        fwrite(v[i].name, 1, v[i].plen, f);
        fputs(brackets ? "[" : "", f);
        for (size_t r = i; r < j && !v[r].single; r++) {
            fprintf(f, "%s%0*lu", r > i ? "," : "", v[r].width, v[r].lo);
            if (v[r].hi > v[r].lo)
                fprintf(f, "-%0*lu", v[r].width, v[r].hi);
        }
        fputs(brackets ? "]" : "", f);
    }
}

char *hostlist_fold(char *const *hosts, size_t n, struct err *err)
{
    struct frange *v = calloc(n ? n : 1, sizeof *v), r;
    size_t nr = 0, outlen = 0;
    char *out = NULL;
    FILE *f = NULL;
    int failed;

    if (!v || !(f = open_memstream(&out, &outlen))) {
        err_set(err, "out of memory folding a hostlist");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (fold_parse(hosts[i], &r, err) < 0)
            goto out;
        fold_push(v, &nr, r);
    }
    fold_print(f, v, nr);
    failed = ferror(f);
    if (fclose(f) != 0 || failed) {
        err_set(err, "out of memory folding a hostlist");
        free(out);
        out = NULL;
    }
    f = NULL;
out:
    if (f) {
        fclose(f);
        free(out);
        out = NULL;
    }
    free(v);
    return out;
}

/* Set err to 'bad tasks-per-node "SPEC": WHAT at "REST"; ...'; -1. */
static int tbad(const struct ctx *c, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int tbad(const struct ctx *c, const char *at, const char *fmt, ...)
{
    char what[ERR_MSG_MAX], spec[SHOW_MAX + 4], rest[SHOW_MAX + 4];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return err_set(c->err, "bad tasks-per-node \"%s\": %s at \"%s\"; write "
                   "counts per node such as 2(x3),1",
                   show(spec, c->spec, strlen(c->spec)), what,
                   show(rest, at, strlen(at)));
}

/* The digits at *p as a number, moving *p past them.  -1 if there are
 * none, -2 if it is more than max (only digits: Slurm writes no signs or
 * blanks here). */
static int tpn_number(const char **p, unsigned long max, unsigned long *v)
{
    const char *s = *p;
    unsigned long x = 0;

    if (!isdigit((unsigned char)*s))
        return -1;
    for (; isdigit((unsigned char)*s); s++) {
        x = x * 10 + (unsigned long)(*s - '0');
        if (x > max)
            return -2;
    }
    *p = s;
    *v = x;
    return 0;
}

/* One "N" or "N(xR)" at *p: N tasks on each of R nodes. */
static int tpn_item(const struct ctx *c, const char **p, unsigned long *count,
                    unsigned long *reps)
{
    const char *at = *p;
    int rc = tpn_number(p, TASKS_PER_NODE_MAX, count);

    *reps = 1;
    if (rc == -1)
        return tbad(c, at, "expected a count");
    if (rc == -2)
        return tbad(c, at, "a count over %d (Slurm keeps at most that many "
                    "per node)", TASKS_PER_NODE_MAX);
    if (*count == 0)
        return tbad(c, at, "a count of 0 (Slurm lists no node without tasks)");
    if (strncmp(*p, "(x", 2) != 0)
        return 0;
    *p += 2;
    rc = tpn_number(p, HOSTLIST_MAX_NAMES, reps);
    if (rc == -1 || (rc == 0 && **p != ')'))
        return tbad(c, at, "expected N(xR), R nodes with N each,");
    if (rc == -2 || *reps == 0)
        return tbad(c, at, "a repeat count outside 1..%d", HOSTLIST_MAX_NAMES);
    (*p)++;
    return 0;
}

/* Read every item; with out, write the counts there too.  *nodes is the
 * number of counts. */
static int tpn_walk(const struct ctx *c, int *out, size_t *nodes)
{
    const char *p = c->spec;
    unsigned long count, reps, sum = 0;
    size_t n = 0;

    for (;;) {
        if (tpn_item(c, &p, &count, &reps) < 0)
            return -1;
        if (reps > HOSTLIST_MAX_NAMES - n)
            return tbad(c, p, "more than %d nodes", HOSTLIST_MAX_NAMES);
        if (count * reps > (unsigned long)INT_MAX - sum)
            return tbad(c, p, "more than %d tasks in all", INT_MAX);
        for (unsigned long i = 0; out && i < reps; i++)
            out[n + i] = (int)count;
        n += reps;
        sum += count * reps;
        if (*p != ',')
            break;
        p++;
    }
    if (*p)
        return tbad(c, p, "unexpected text");
    *nodes = n;
    return 0;
}

int tasks_per_node_parse(const char *spec, int **counts, size_t *n,
                         struct err *err)
{
    struct ctx c = { spec, err, false };
    size_t nodes = 0;
    int *v = NULL;

    *counts = NULL;
    *n = 0;
    if (!spec)
        return err_set(err, "no tasks-per-node string given");
    if (tpn_walk(&c, NULL, &nodes) < 0)
        return -1;
    if (!(v = malloc(nodes * sizeof *v)))
        return err_set(err, "out of memory reading tasks per node");
    tpn_walk(&c, v, &nodes);
    *counts = v;
    *n = nodes;
    return 0;
}
