/* fuzz_preflight.c - libFuzzer target for what the head reads from the
 * broker in a preflight (lib/observe/preflight.h): a node's report and its link
 * results, written by an agent or by any rank that holds the token.
 *
 * It never crashes, every string it keeps fits its field and is one line,
 * a failure says why, and what it accepts encodes back to text that
 * decodes to the same report. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "observe/preflight.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int cond)
{
    if (!cond)
        abort();
}

static void check_strings(const struct pf_report *r)
{
    const char *s[] = { r->host, r->version, r->prog, r->prog_err, r->python,
                        r->import_mod, r->import_err, r->nccl, r->cuda,
                        r->addr };

    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        must(strnlen(s[i], PF_STR) < PF_STR && !strchr(s[i], '\n'));
}

static void check_report(const char *buf, size_t size)
{
    struct pf_report r, back, third;
    struct err err = { "" };
    char *text = NULL;
    size_t len = 0;
    int rc = pf_decode(buf, size, &r, &err);

    must(rc == 0 || (rc == -1 && err.msg[0]));
    if (rc < 0)
        return;
    must(r.node >= 0);
    check_strings(&r);
    must(pf_encode(&r, &text, &len) == 0);
    must(pf_decode(text, len, &back, &err) == 0);
    /* control bytes became '?': compare after a second round */
    free(text);
    must(pf_encode(&back, &text, &len) == 0);
    must(pf_decode(text, len, &third, &err) == 0);
    must(strcmp(back.host, third.host) == 0 && back.node == third.node &&
         back.gpus == third.gpus && back.mem_free_mb == third.mem_free_mb &&
         strcmp(back.import_err, third.import_err) == 0);
    free(text);
}

static void check_links(const char *buf, size_t size)
{
    struct pf_link l[8];
    struct err err = { "" };
    int n = -1;
    int rc = pf_links_decode(buf, size, l, 8, 16, &n, &err);

    must(rc == 0 || (rc == -1 && err.msg[0]));
    must(n >= 0 && n <= 8);
    for (int i = 0; rc == 0 && i < n; i++)
        must(l[i].peer >= 0 && l[i].peer < 16 && l[i].rtt_us >= -1 &&
             strnlen(l[i].err, PF_STR) < PF_STR);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_report((const char *)data, size);
    check_links((const char *)data, size);
    return 0;
}
