/* token.h - the per-job secret that every broker connection must present.
 *
 * 128 random bits from getrandom(), carried in the environment of agents
 * and ranks as DLRUN_TOKEN (32 lowercase hex digits) and sent raw (16
 * bytes) in the AUTH frame.  See dlrun-broker(7) for what it protects. */
#ifndef DLRUN_TOKEN_H
#define DLRUN_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define TOKEN_BYTES 16
#define TOKEN_HEX_LEN (2 * TOKEN_BYTES)     /* without the NUL */

/* Fill out with fresh random bytes from the kernel's CSPRNG (blocks only
 * until the pool is initialised at boot).  0 / -1 with err. */
int token_new(uint8_t out[TOKEN_BYTES], struct err *err);

/* Write the 32 lowercase hex digits and a NUL into out. */
void token_to_hex(const uint8_t tok[TOKEN_BYTES], char out[TOKEN_HEX_LEN + 1]);

/* Parse exactly 32 hex digits (either case) from hex (borrowed) into out.
 * 0 / -1 with err (which never echoes the secret). */
int token_from_hex(const char *hex, uint8_t out[TOKEN_BYTES], struct err *err);

/* 1 when the n bytes at a and b are equal, else 0, in a time that does not
 * depend on where they differ (no early exit), so a remote peer cannot
 * guess the token byte by byte from response times. */
int token_equal(const uint8_t *a, const uint8_t *b, size_t n);

#endif
