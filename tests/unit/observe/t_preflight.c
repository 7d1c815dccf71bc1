/* t_preflight.c - the preflight report and link results as text
 * (lib/observe/preflight.c).  The probes and the echo listener
 * (preflight_probe.c) are tested in t_preflight_probe.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "observe/preflight.h"
#include "tap.h"

static void roundtrip(void)
{
    struct pf_report r = { .node = 3, .gpus = 4, .mem_free_mb = 123456 }, d;
    struct err err = { "" };
    char *text = NULL;
    size_t len = 0;

    snprintf(r.host, PF_STR, "node3");
    snprintf(r.prog, PF_STR, "/usr/bin/python3");
    snprintf(r.import_err, PF_STR, "No module named 'torch'\nsecond line");
    snprintf(r.addr, PF_STR, "[fe80::1]:4000");
    ok(pf_encode(&r, &text, &len) == 0 && len == strlen(text), "encoded");
    ok(strstr(text, "import_err=No module named 'torch'?second line\n") != NULL,
       "a newline inside a value becomes '?'");
    ok(pf_decode(text, len, &d, &err) == 0, "decoded");
    is_int(d.node, 3, "  node");
    is_int(d.gpus, 4, "  gpus");
    is_int(d.mem_free_mb, 123456, "  memory");
    is_str(d.prog, "/usr/bin/python3", "  program");
    is_str(d.addr, "[fe80::1]:4000", "  address");
    is_str(d.nccl, "", "  empty string stays empty");
    free(text);
}

static void bad(const char *text, const char *want, const char *what)
{
    struct pf_report r;
    struct err err = { "" };

    ok(pf_decode(text, strlen(text), &r, &err) < 0 && strstr(err.msg, want),
       what);
    if (!strstr(err.msg, want))
        printf("#   got '%s'\n", err.msg);
}

static void refused(void)
{
    char longer[PF_STR + 20];
    struct pf_report r;
    struct err err = { "" };

    bad("host=a\n", "no node", "no node: refused");
    bad("node=1\nnode=2\n", "node given twice", "a key twice: refused");
    bad("node=x\n", "node: not a number", "a node that is not a number");
    bad("node=1 \n", "not a number", "trailing blank in a number");
    bad("node=99999999999\n", "not a number", "a node out of range");
    bad("node=1\njunk\n", "without '='", "a line without '='");
    snprintf(longer, sizeof longer, "node=1\nhost=%0*d\n", PF_STR, 0);
    bad(longer, "host: too long", "a string longer than the field");
    ok(pf_decode("node=1\nfuture=x\n", 16, &r, &err) == 0 && r.node == 1 &&
       r.gpus == -1, "an unknown key is skipped, the rest stays unknown");
}

static void links(void)
{
    struct pf_link l[2] = { { 1, 250, "" }, { 2, -1, "cannot connect" } },
                   d[4];
    struct err err = { "" };
    char *text = NULL;
    size_t len = 0;
    int n = 0;

    ok(pf_links_encode(l, 2, &text, &len) == 0, "links encoded");
    ok(pf_links_decode(text, len, d, 4, 3, &n, &err) == 0 && n == 2,
       "links decoded");
    is_int(d[0].rtt_us, 250, "  round trip");
    is_str(d[1].err, "cannot connect", "  the failure's reason");
    ok(pf_links_decode(text, len, d, 4, 2, &n, &err) < 0,
       "a peer outside the plan is refused");
    ok(pf_links_decode(text, len, d, 1, 3, &n, &err) < 0 &&
       strstr(err.msg, "more than 1"), "more links than room: refused");
    ok(pf_links_decode("link=1 x \n", 10, d, 4, 3, &n, &err) < 0,
       "a round trip that is not a number: refused");
    free(text);
}

int main(void)
{
    roundtrip();
    refused();
    links();
    return tap_done();
}
