/* jobspec.c - checks of job-script values (see jobspec.h). */
#include "scripts/jobspec.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/shquote.h"

/* s for a one-line message: control characters as \n, \r, \xHH, and
 * cut to about 60 bytes.  Returns buf. */
const char *jobspec_visible(const char *s, char buf[80])
{
    size_t o = 0;

    for (; *s && o < 64; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '\n' || c == '\r' || c == '\t')
            o += (size_t)snprintf(buf + o, 80 - o, "\\%c",
                                  c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
        else if (c < 0x20 || c == 0x7f)
            o += (size_t)snprintf(buf + o, 80 - o, "\\x%02x", c);
        else
            buf[o++] = (char)c;
    }
    snprintf(buf + o, 80 - o, "%s", *s ? "..." : "");
    return buf;
}

const struct sched *jobspec_parse_sched(const char *s, struct err *err)
{
    const struct sched *row = sched_find(s);
    char b[80];

    if (!row)
        err_set(err, "unknown scheduler '%s' (%s)", jobspec_visible(s, b),
                sched_names());
    return row;
}

int jobspec_parse_count(const char *s, long min, long max, long *out,
                        struct err *err)
{
    char *end = NULL, b[80];
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || !isdigit((unsigned char)*s) || v < min ||
        v > max)
        return err_set(err, "'%s' is not a whole number from %ld to %ld",
                       jobspec_visible(s, b), min, max);
    *out = v;
    return 0;
}

/* Up to 3 numbers separated by ':' into f[]; returns how many, -1 bad. */
static int colon_fields(const char *s, long f[3])
{
    int n = 0;

    while (n < 3) {
        char *end = NULL;

        if (!isdigit((unsigned char)*s))
            return -1;
        errno = 0;
        f[n++] = strtol(s, &end, 10);
        if (errno || f[n - 1] > 100000)
            return -1;
        if (*end == '\0')
            return n;
        if (*end != ':')
            return -1;
        s = end + 1;
    }
    return -1;
}

int jobspec_parse_time(const char *s, long *secs, struct err *err)
{
    const char *dash = strchr(s, '-');
    long days = 0, f[3] = { 0, 0, 0 }, t;
    char b[80];
    int n;

    if (dash) {
        char *end = NULL;

        errno = 0;
        days = strtol(s, &end, 10);
        if (errno || end != dash || !isdigit((unsigned char)*s) || days > 365)
            goto bad;
        s = dash + 1;
    }
    n = colon_fields(s, f);
    if (n < 0 || (n == 2 && !dash))
        goto bad;
    if (!dash)      /* MINUTES or H:M:S */
        t = n == 1 ? f[0] * 60 : f[0] * 3600 + f[1] * 60 + f[2];
    else            /* D-H, D-H:M, D-H:M:S */
        t = days * 86400 + f[0] * 3600 + f[1] * 60 + f[2];
    if ((n == 3 && (f[1] > 59 || f[2] > 59)) || (n == 2 && f[1] > 59) ||
        t < 60)
        goto bad;
    *secs = t;
    return 0;
bad:
    return err_set(err, "'%s' is not a wall time of at least a minute: "
                   "write HH:MM:SS, D-HH:MM:SS or minutes",
                   jobspec_visible(s, b));
}

static const char *const signal_names[] = {
    "USR1", "USR2", "TERM", "INT", "HUP", "QUIT", "ALRM", "XCPU",
};

int jobspec_parse_signal(const char *s, char name[8], long *secs,
                         struct err *err)
{
    const char *at = strchr(s, '@'), *n = s;
    size_t len = at ? (size_t)(at - s) : strlen(s);
    struct err ignored;
    char b[80];

    if (len > 3 && strncasecmp(n, "SIG", 3) == 0)
        n += 3, len -= 3;
    *secs = 60;
    if (at && jobspec_parse_count(at + 1, 1, 65535, secs, &ignored) < 0)
        return err_set(err, "'%s': the seconds after @ are not a whole "
                       "number from 1 to 65535", jobspec_visible(s, b));
    for (size_t i = 0; i < sizeof signal_names / sizeof *signal_names; i++)
        if (strlen(signal_names[i]) == len &&
            strncasecmp(n, signal_names[i], len) == 0) {
            strcpy(name, signal_names[i]);
            return 0;
        }
    return err_set(err, "'%s' is not SIGNAL[@SECONDS] with a signal among "
                   "USR1 USR2 TERM INT HUP QUIT ALRM XCPU (e.g. USR1@90)",
                   jobspec_visible(s, b));
}

int jobspec_parse_tasks(const char *s, struct err *err)
{
    char b[80];

    if (strcmp(s, "per-node") == 0)
        return 0;
    if (strcmp(s, "per-gpu") == 0)
        return 1;
    return err_set(err, "'%s' is neither per-node (one dlrun per node "
                   "starts the ranks) nor per-gpu (one task per GPU)",
                   jobspec_visible(s, b));
}

int jobspec_parse_launcher(const char *s, struct err *err)
{
    char b[80];
    int dlrun_own = strcmp(s, "ssh") == 0 || strcmp(s, "srun") == 0 ||
                    strcmp(s, "local") == 0;

    if (strcmp(s, "dlrun") == 0)
        return 0;
    if (strcmp(s, "mpirun") == 0)
        return 1;
    /* dlrun's own --launcher srun|ssh|local is another thing */
    return err_set(err, "'%s' is neither dlrun (one dlrun starts an agent "
                   "on each node) nor mpirun (mpirun starts a dlrun per "
                   "node)%s", jobspec_visible(s, b), dlrun_own ?
                   "; dlrun's own --launcher goes into dlrun-options" : "");
}

int jobspec_parse_bool(const char *s, struct err *err)
{
    static const char *const yes[] = { "true", "yes", "on", "1" };
    static const char *const no[] = { "false", "no", "off", "0" };
    char b[80];

    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0)
            return 1;
        if (strcasecmp(s, no[i]) == 0)
            return 0;
    }
    return err_set(err, "'%s' is not true or false", jobspec_visible(s, b));
}

int jobspec_check_token(const char *s, struct err *err)
{
    char b[80];

    if (!shquote_is_bare(s))
        return err_set(err, "'%s' would not stay one word in a directive "
                       "line: use letters, digits and -_.,:@+=/%% only",
                       jobspec_visible(s, b));
    return 0;
}

int jobspec_check_line(const char *s, struct err *err)
{
    if (!*s)
        return err_set(err, "empty text");
    if (shquote_has_control(s))
        return err_set(err, "a newline or control character would break "
                       "the script's line");
    return 0;
}

int jobspec_check_env_name(const char *s, struct err *err)
{
    char b[80];

    if (!*s || isdigit((unsigned char)*s))
        goto bad;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            goto bad;
    return 0;
bad:
    return err_set(err, "'%s' is not a variable name (letters, digits, _)",
                   jobspec_visible(s, b));
}
