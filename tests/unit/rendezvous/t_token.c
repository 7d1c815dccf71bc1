/* t_token.c - the job's secret: fresh tokens differ, hex out and back
 * (both cases in, lowercase out), every malformed hex refused with a
 * message that does not echo it, and the constant-time comparison. */
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "rendezvous/token.h"

static void generate(void)
{
    uint8_t a[TOKEN_BYTES], b[TOKEN_BYTES], zero[TOKEN_BYTES] = { 0 };
    struct err err = { "" };

    is_int(token_new(a, &err), 0, "token_new");
    is_int(token_new(b, &err), 0, "token_new again");
    ok(memcmp(a, b, TOKEN_BYTES) != 0, "two tokens differ");
    ok(memcmp(a, zero, TOKEN_BYTES) != 0, "a token is not all zero");
}

static void hex(void)
{
    static const uint8_t t[TOKEN_BYTES] = { 0x00, 0x01, 0x7f, 0x80, 0xab,
        0xcd, 0xef, 0xff, 0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe };
    char h[TOKEN_HEX_LEN + 1];
    uint8_t back[TOKEN_BYTES];
    struct err err = { "" };

    token_to_hex(t, h);
    is_str(h, "00017f80abcdefff1032547698badcfe", "32 lowercase hex digits");
    ok(token_from_hex(h, back, &err) == 0 && memcmp(back, t, TOKEN_BYTES) == 0,
       "hex back to the same bytes");
    ok(token_from_hex("00017F80ABCDEFFF1032547698BADCFE", back, &err) == 0 &&
       memcmp(back, t, TOKEN_BYTES) == 0, "uppercase accepted");
}

static void refused(void)
{
    static const char *const bad[] = {
        "", "0", "00017f80abcdefff1032547698badcf",
        "00017f80abcdefff1032547698badcfe0", "g0017f80abcdefff1032547698badcfe",
        "00017f80abcdefff1032547698badcf ", " 0017f80abcdefff1032547698badcfe",
        "0x017f80abcdefff1032547698badcfe", "00017f80abcdefff-032547698badcfe",
        NULL,
    };
    uint8_t out[TOKEN_BYTES];
    struct err err = { "" };
    int refusals = 0, echoed = 0;

    for (int i = 0; bad[i]; i++) {
        err.msg[0] = '\0';
        if (token_from_hex(bad[i], out, &err) == -1 && err.msg[0])
            refusals++;
        if (strlen(bad[i]) > 8 && strstr(err.msg, bad[i] + 4))
            echoed++;
    }
    is_int(refusals, 9, "each malformed token refused with a message");
    is_int(echoed, 0, "no message repeats the token's digits");
    ok(token_from_hex(NULL, out, &err) == -1 && strstr(err.msg, "32 hex"),
       "NULL refused: says 32 hex digits");
}

static void equal(void)
{
    uint8_t a[TOKEN_BYTES], b[TOKEN_BYTES];
    int ok_all = 1;

    memset(a, 0x5a, sizeof a);
    memcpy(b, a, sizeof b);
    ok(token_equal(a, b, TOKEN_BYTES) == 1, "equal tokens: 1");
    for (int i = 0; i < TOKEN_BYTES; i++)
        for (int bit = 0; bit < 8; bit++) {
            b[i] ^= (uint8_t)(1 << bit);
            ok_all &= token_equal(a, b, TOKEN_BYTES) == 0;
            b[i] ^= (uint8_t)(1 << bit);
        }
    ok(ok_all, "any one bit different, anywhere: 0");
    ok(token_equal(a, b, 0) == 1, "zero bytes compare equal");
}

int main(void)
{
    generate();
    hex();
    refused();
    equal();
    return tap_done();
}
