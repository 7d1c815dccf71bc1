/* fuzz_hostname.c - lib/where/hostname.c: whatever a host name or login check
 * accepts can go on a command line as one word that is not an option and
 * means nothing to a shell; a refusal is one line. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "where/hostname.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int cond)
{
    if (!cond)
        abort();
}

/* Only letters, digits and "-._" plus what addresses need. */
static int plain(const char *s, size_t len, const char *extra)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || strchr("-._", c) ||
              (c && strchr(extra, c))))
            return 0;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *name = malloc(size + 1);
    struct err err = { "" };
    size_t len;

    if (!name)
        return 0;
    memcpy(name, data, size);
    name[size] = '\0';
    len = strlen(name);
    if (hostname_check(name, &err) == 0) {
        must(len > 0 && name[0] != '-' && plain(name, len, ":%[]"));
        must(len <= 253 + 2 || hostname_is_ipv6(name));
    } else {
        must(err.msg[0] && !strchr(err.msg, '\n'));
    }
    if (hostname_is_ipv6(name))
        must(hostname_check(name, NULL) == 0);
    if (hostname_check_login(name, len, &err) == 0)
        must(len > 0 && len <= 32 && name[0] != '-' && plain(name, len, ""));
    free(name);
    return 0;
}
