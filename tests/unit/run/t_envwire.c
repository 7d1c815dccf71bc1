/* t_envwire.c - how secrets and -x values travel between dlrun processes:
 * the DLRUN_X_ carriers in an environment, and the escaped lines on an
 * agent's stdin (round trips, pieces, limits, refusals). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/envwire.h"
#include "tap.h"

extern char **environ;

/* Decode text fed in pieces of step bytes: the entries joined by '|'. */
static char *decode(const char *text, size_t len, size_t step, int *rc,
                    struct err *err)
{
    struct envwire_dec d = { 0 };
    char *out = NULL;
    size_t off = 0, outlen = 0;
    FILE *m = open_memstream(&out, &outlen);

    *rc = 0;
    while (*rc == 0 && off < len) {
        size_t used = 0, n = len - off < step ? len - off : step;
        *rc = envwire_feed(&d, text + off, n, &used, err);
        off += used;
    }
    for (size_t i = 0; *rc == 1 && i < d.out.n; i++)
        fprintf(m, "%s%s", i ? "|" : "", d.out.v[i]);
    fclose(m);
    envwire_dec_free(&d);
    return out;
}

static void roundtrip(void)
{
    char *envp[] = { "PATH=/bin", "DLRUN_TOKEN=abc", "DLRUN_X_HF=hf_\\x\ny\\n",
                     "DLRUN_X_E=", "DLRUN_BROKER=10.0.0.1:5", "DLRUN_X_=no",
                     "DLRUN_TOKENX=no", NULL };
    size_t len = 0;
    char *text = envwire_encode(envp, &len), *got;
    struct err err = { "" };
    int rc;

    is_str(text, "DLRUN_TOKEN=abc\nDLRUN_X_HF=hf_\\\\x\\ny\\\\n\nDLRUN_X_E=\n"
           "DLRUN_BROKER=10.0.0.1:5\n\n", "encode: only what travels, escaped");
    for (size_t step = 1; step <= len; step += 7) {
        got = decode(text, len, step, &rc, &err);
        is_str(got, "DLRUN_TOKEN=abc|DLRUN_X_HF=hf_\\x\ny\\n|DLRUN_X_E=|"
               "DLRUN_BROKER=10.0.0.1:5", "decode gives the entries back");
        free(got);
    }
    free(text);
    text = envwire_encode(NULL, &len);
    is_str(text, "\n", "nothing: the empty line alone");
    free(text);
}

static void refused(const char *text, size_t len, const char *what,
                    const char *msg)
{
    struct err err = { "" };
    int rc;
    char *got = decode(text, len ? len : strlen(text), 3, &rc, &err);

    ok(rc == -1 && strstr(err.msg, msg), what);
    if (rc != -1 || !strstr(err.msg, msg))
        printf("#   rc %d, err '%s'\n", rc, err.msg);
    free(got);
}

static void refusals(void)
{
    struct err err = { "" };
    size_t big = ENVWIRE_ENTRY_MAX + 10, used = 0;
    char *text = malloc(big);
    struct envwire_dec d = { 0 };
    int rc;

    refused("A=1\nnoequals\n\n", 0, "an entry without =", "without NAME=");
    refused("=1\n\n", 0, "an empty name", "without NAME=");
    refused("A=\\t\n\n", 0, "a bad escape", "bad escape");
    refused("A=1\0\n\n", 6, "a NUL byte", "NUL");
    memset(text, 'x', big);
    memcpy(text, "A=", 2);
    rc = envwire_feed(&d, text, big, &used, &err);
    ok(rc == -1 && strstr(err.msg, "longer than"), "an entry over the limit");
    envwire_dec_free(&d);
    /* 100-byte entries, never the end */
    memset(text, 'x', big);
    for (size_t i = 0; i + 100 <= big; i += 100) {
        memcpy(text + i, "A=", 2);
        text[i + 99] = '\n';
    }
    rc = 0;
    for (int k = 0; rc == 0 && k < 20; k++)
        rc = envwire_feed(&d, text, big / 100 * 100, &used, &err);
    ok(rc == -1 && strstr(err.msg, "more than"), "the whole over its limit");
    envwire_dec_free(&d);
    free(text);
}

/* The end stops the feed: what follows is not taken. */
static void stops_at_end(void)
{
    struct envwire_dec d = { 0 };
    struct err err = { "" };
    const char *text = "A=1\n\nlifeline bytes";
    size_t used = 0;

    is_int(envwire_feed(&d, text, strlen(text), &used, &err), 1, "end found");
    is_int(used, 5, "  nothing after it taken");
    envwire_dec_free(&d);
}

static void read_fd(void)
{
    struct strv got = { 0 };
    struct err err = { "" };
    int p[2];
    char rest[16] = "";

    if (pipe(p) < 0)
        return;
    ok(write(p[1], "DLRUN_X_A=1\\n2\n\nLIFE", 20) == 20, "written");
    close(p[1]);
    is_int(envwire_read(p[0], &got, &err), 0, "read from a pipe");
    is_str(got.n == 1 ? got.v[0] : NULL, "DLRUN_X_A=1\n2", "  the entry");
    ok(read(p[0], rest, sizeof rest - 1) == 4 && strcmp(rest, "LIFE") == 0,
       "  the rest of the pipe left unread");
    strv_free(&got);
    close(p[0]);
    if (pipe(p) < 0)
        return;
    ok(write(p[1], "DLRUN_X_A=1\n", 12) == 12, "written");
    close(p[1]);
    ok(envwire_read(p[0], &got, &err) == -1 && strstr(err.msg, "ended"),
       "EOF before the empty line: refused");
    close(p[0]);
}

static void exports(void)
{
    struct envset s = { .no_from = 1 };
    struct strv owned = { 0 };
    struct err err = { "" };
    char *envp[] = { "HF=hf_1", NULL }, **list = NULL;
    int n = 0;

    is_int(envwire_put_export(&s, "HF", envp, &err), 1, "-x HF: its value");
    is_int(envwire_put_export(&s, "B=x=y", envp, &err), 1, "-x B=x=y");
    is_int(envwire_put_export(&s, "NOPE", envp, &err), 0, "-x NOPE: a name");
    is_str(envset_get(&s, "DLRUN_X_HF"), "hf_1", "  DLRUN_X_HF");
    is_str(envset_get(&s, "DLRUN_X_B"), "x=y", "  DLRUN_X_B");
    is_int(s.n, 2, "  two carriers");
    envset_free(&s);

    setenv("DLRUN_X_T1", "v\n1", 1);
    setenv("DLRUN_X_T2", "", 1);
    setenv("KEEP", "k", 1);
    list = malloc(2 * sizeof *list);
    list[0] = "GIVEN";
    list[1] = NULL;
    n = 1;
    is_int(envwire_take_exports(&list, &n, &owned, &err), 0, "take");
    is_int(n, 3, "  two more -x entries");
    ok(n == 3 && ((strcmp(list[1], "T1=v\n1") == 0 && strcmp(list[2], "T2=") == 0) ||
                  (strcmp(list[2], "T1=v\n1") == 0 && strcmp(list[1], "T2=") == 0)),
       "  T1 and T2 with their values");
    ok(!getenv("DLRUN_X_T1") && !getenv("DLRUN_X_T2") && getenv("KEEP"),
       "  the carriers left the environment, nothing else");
    ok(list[n] == NULL && strcmp(list[0], "GIVEN") == 0, "  list kept");
    free(list);
    strv_free(&owned);
}

int main(void)
{
    roundtrip();
    refusals();
    stops_at_end();
    read_fd();
    exports();
    return tap_done();
}
