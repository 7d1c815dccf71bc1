/* t_hostfile.c - host lists given by the user: -H's grammar (slots,
 * hostlists, repeats, logins, IPv6) and the host file dialects (Open MPI,
 * DeepSpeed, Horovod, PBS), each refusal with its position. */
#include <stdio.h>
#include <string.h>

#include "where/alloc.h"
#include "fixture.h"
#include "where/hostfile.h"
#include "tap.h"

struct hf_row {
    const char *what, *text, *nodes, *err_has;
};

static const struct hf_row hf_rows[] = {
    { "open mpi style", "# cluster\nn1 slots=4 max_slots=8\nn2 slots=2\n\n",
      "n1:4,n2:2", NULL },
    { "horovod style", "n1:4\nn2:4\n", "n1:4,n2:4", NULL },
    { "pbs style repeats are slots", "a.x\na.x\nb.x\na.x\n", "a.x:3,b.x:1",
      NULL },
    { "comment after host", "n1 slots=2 # fast one\n", "n1:2", NULL },
    { "hostlist in a host file", "gpu[1-2] slots=8\n", "gpu1:8,gpu2:8", NULL },
    { "unknown key", "n1 slots=2\nn2 cpus=4\n", NULL, "hosts:2:4" },
    { "zero slots", "n1 slots=0\n", NULL, "hosts:1:4" },
    { "empty file", "# nothing\n\n", NULL, "no hosts" },
    { "bad colon slots", "n1:x\n", NULL, "hosts:1" },
    { "bad host name", "n1\n`id` slots=2\n", NULL,
      "hosts:2: host name \"`id`\"" },
    /* issue 11 item 11: host files as Open MPI and PRRTE read them */
    { "max_slots alone gives its slots", "n1 max_slots=4\nn2 max-slots=2\n",
      "n1:4,n2:2", NULL },
    { "slots above max_slots", "n1 slots=8 max_slots=4\n", NULL,
      "hosts:1: slots=8 is more than max_slots=4" },
    { "slots above max_slots, max first", "n1 max_slots=4 slots=8\n", NULL,
      "hosts:1: slots=8 is more than max_slots=4" },
    { "a host twice with different slots", "n1 slots=2\nn2\nn1 slots=4\n",
      NULL, "hosts:3: host n1 has slots=4 here but slots=2 at line 1" },
    { "a host with slots, then bare", "n1 slots=2\nn1\n", NULL,
      "hosts:2: host n1 has no slots (one per line) here but slots=2 at "
      "line 1" },
    { "a host twice with the same slots: once", "n1 slots=2\nn1 slots=2\n",
      "n1:2", NULL },
    { "user@host", "alice@n1 slots=2\nn2\n", "alice@n1:2,n2:1", NULL },
    { "username=", "n1 slots=2 username=bob\n", "bob@n1:2", NULL },
    { "two logins for a host", "alice@n1\nbob@n1\n", NULL,
      "hosts:2: host n1: login alice and login bob" },
    { "bad login", "-oX@n1\n", NULL, "hosts:1: login name \"-oX\"" },
    { "blanks around =", "n1 slots = 4\nn2 slots= 2 max_slots =3\n",
      "n1:4,n2:2", NULL },
    { "// and /* */ comments", "// cluster\nn1 slots=2 // fast\n"
      "/* spare:\nn9 slots=8 */ n2:3\n", "n1:2,n2:3", NULL },
    { "an open /* comment", "n1\n/* n2\n", NULL,
      "hosts:2: a '/*' comment is never closed" },
    { "count and cpu are slots", "n1 count=2\nn2 cpu=3\n", "n1:2,n2:3",
      NULL },
    { "slots given twice on a line", "n1 slots=2 count=3\n", NULL,
      "hosts:1:12: 'count' given twice" },
    { "horovod host:N", "n1:4\nn2:2\n", "n1:4,n2:2", NULL },
    { "deepspeed host slots=N", "worker-0 slots=8\nworker-1 slots=8\n",
      "worker-0:8,worker-1:8", NULL },
    { "ipv6 in brackets with slots", "[fe80::1]:2\n", "fe80::1:2", NULL },
    { "bare ipv6 with slots=", "fe80::2 slots=3\n", "fe80::2:3", NULL },
    { "not an ipv6 address", "fe80::g\n", NULL, "hosts:1: host name "
      "\"fe80::g\": not an IPv6 address" },
};

static const struct hf_row h_rows[] = {
    { "-H slots", "h1:4,h2:2", "h1:4,h2:2", NULL },
    { "-H no slots: one each", "h1,h2", "h1:1,h2:1", NULL },
    { "-H repeats add slots", "h1,h1,h2,h1:2", "h1:4,h2:1", NULL },
    { "-H hostlist with slots", "node[1-3]:2", "node1:2,node2:2,node3:2", NULL },
    { "-H zero-padded hostlist", "n[08-10]", "n08:1,n09:1,n10:1", NULL },
    { "-H login", "alice@h1:4", "alice@h1:4", NULL },
    { "-H ipv6 in brackets with slots", "[fe80::1]:4", "fe80::1:4", NULL },
    { "-H bare ipv6: one slot", "fe80::1", "fe80::1:1", NULL },
    { "-H zero slots", "h1:0", NULL, "h1:0" },
    { "-H slots not a number", "h1:x", NULL, "h1:x" },
    { "-H empty entry", "h1,,h2", NULL, "empty" },
    { "-H two logins for a host", "alice@h1,bob@h1", NULL, "h1" },
    { "-H shell text as a name", "`id`", NULL, "`id`" },
};

/* -H's parser with hostfile_parse's arguments. */
static int parse_hosts(const char *text, const char *path, struct alloc *a,
                       struct err *err)
{
    (void)path;
    return hosts_parse(text, a, err);
}

/* Each row through parse: its nodes, or its refusal's message. */
static void check(const struct hf_row *rows, size_t n,
                  int (*parse)(const char *, const char *, struct alloc *,
                               struct err *))
{
    for (size_t i = 0; i < n; i++) {
        const struct hf_row *r = &rows[i];
        struct alloc a = { 0 };
        struct err err = { "" };
        int rc = parse(r->text, "hosts", &a, &err);

        if (r->nodes) {
            if (!ok(rc == 0, r->what))
                printf("#   error: %s\n", err.msg);
            else
                is_str(alloc_nodes_str(&a), r->nodes, r->what);
        } else {
            ok(rc < 0, r->what);
            if (!ok(strstr(err.msg, r->err_has) != NULL, "  message position"))
                printf("#   message: %s\n", err.msg);
        }
        alloc_free(&a);
    }
}

int main(void)
{
    check(hf_rows, sizeof hf_rows / sizeof hf_rows[0], hostfile_parse);
    check(h_rows, sizeof h_rows / sizeof h_rows[0], parse_hosts);
    return tap_done();
}
