/* t_err.c - the error struct: err_set's formatting and its -1, a NULL
 * err tolerated, err_prefix adding context (and keeping the head of the
 * message when the whole does not fit), err_quote's one-line view of user
 * text. */
#include <string.h>

#include "util/err.h"
#include "tap.h"

static void set_and_prefix(void)
{
    struct err err = { "" };
    char big[ERR_MSG_MAX * 2];

    is_int(err_set(&err, "bad %s at %d", "value", 7), -1, "err_set returns -1");
    is_str(err.msg, "bad value at 7", "err_set formats");
    is_int(err_set(NULL, "nobody %s", "reads"), -1, "a NULL err: still -1");
    is_int(err_prefix(&err, "--np=%d", 3), -1, "err_prefix returns -1");
    is_str(err.msg, "--np=3: bad value at 7", "err_prefix puts context first");
    err_prefix(&err, "dlrun");
    is_str(err.msg, "dlrun: --np=3: bad value at 7", "prefixes nest outward");
    is_int(err_prefix(NULL, "x"), -1, "err_prefix on NULL: -1");

    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    err_set(&err, "%s", big);
    is_int(strlen(err.msg), ERR_MSG_MAX - 1, "a long message is cut to fit");
    err_set(&err, "tail");
    err_prefix(&err, "%s", big);
    is_int(strlen(err.msg), ERR_MSG_MAX - 1, "a long prefix is cut to fit");
    ok(err.msg[0] == 'x', "the head (the prefix) is what stays");
}

static void quote(void)
{
    char buf[8 + 4];
    char nul[] = { 'a', '\0', 'b' };

    is_str(err_quote(buf, 8, "host1", 5), "host1", "printable text as is");
    is_str(err_quote(buf, 8, "a\nb\tc\x1b", 6), "a?b?c?",
           "newline, tab, escape become '?'");
    is_str(err_quote(buf, 8, "\xc3\xa9t\xc3\xa9", 5), "??t??",
           "bytes above ASCII become '?' (no half characters)");
    is_str(err_quote(buf, 8, "0123456789", 10), "01234567...",
           "past max: cut, then ...");
    is_str(err_quote(buf, 8, "01234567", 8), "01234567",
           "exactly max: no ...");
    is_str(err_quote(buf, 8, nul, 3), "a?b", "len counts, not the NUL");
    is_str(err_quote(buf, 8, "abc", 0), "", "len 0: empty");
    ok(err_quote(buf, 8, "x", 1) == buf, "returns buf");
}

int main(void)
{
    set_and_prefix();
    quote();
    return tap_done();
}
