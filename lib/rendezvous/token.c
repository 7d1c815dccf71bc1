/* token.c - see token.h. */
#include "rendezvous/token.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

int token_new(uint8_t out[TOKEN_BYTES], struct err *err)
{
    size_t got = 0;

    while (got < TOKEN_BYTES) {
        ssize_t n = getrandom(out + got, TOKEN_BYTES - got, 0);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return err_set(err, "getrandom: %s", strerror(errno));
        got += (size_t)n;
    }
    return 0;
}

void token_to_hex(const uint8_t tok[TOKEN_BYTES], char out[TOKEN_HEX_LEN + 1])
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < TOKEN_BYTES; i++) {
        out[2 * i] = digits[tok[i] >> 4];
        out[2 * i + 1] = digits[tok[i] & 15];
    }
    out[TOKEN_HEX_LEN] = '\0';
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int token_from_hex(const char *hex, uint8_t out[TOKEN_BYTES], struct err *err)
{
    if (!hex || strlen(hex) != TOKEN_HEX_LEN)
        return err_set(err, "a token is %d hex digits (like DLRUN_TOKEN "
                       "printed by `dlrun broker`)", TOKEN_HEX_LEN);
    for (size_t i = 0; i < TOKEN_BYTES; i++) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);

        if (hi < 0 || lo < 0)
            return err_set(err, "a token is %d hex digits: found a "
                           "character that is not 0-9 or a-f",
                           TOKEN_HEX_LEN);
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

int token_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
    /* volatile keeps the compiler from turning the loop into memcmp or
     * stopping at the first difference */
    volatile uint8_t diff = 0;

    for (size_t i = 0; i < n; i++)
        diff |= a[i] ^ b[i];
    return diff == 0;
}
