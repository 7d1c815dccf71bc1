/* t_pmi_wire.c - the simple PMI engine fed what MPICH's client sends
 * (the PMI-1 exchange recorded under mpiexec.hydra, a PMI-2 client's),
 * byte by byte and in one piece, and what breaks the wire. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/pmi_wire.h"
#include "tap.h"


/* The caller's side: a store of 16 keys, what was answered, fences and
 * aborts seen. */
struct fake {
    char keys[16][80], vals[16][1100];
    int nkeys;
    char out[8192];
    size_t outlen;
    int fences, aborts, abort_code, respond_fails;
    char abort_msg[64];
};

static int f_put(void *ctx, int rank, const char *key, const char *val)
{
    struct fake *f = ctx;

    (void)rank;
    if (f->nkeys == 16)
        return -1;
    snprintf(f->keys[f->nkeys], sizeof f->keys[0], "%s", key);
    snprintf(f->vals[f->nkeys++], sizeof f->vals[0], "%s", val);
    return 0;
}

static const char *f_get(void *ctx, int rank, const char *key)
{
    struct fake *f = ctx;

    (void)rank;
    for (int i = f->nkeys - 1; i >= 0; i--)
        if (strcmp(f->keys[i], key) == 0)
            return f->vals[i];
    return NULL;
}

static void f_fence(void *ctx, int rank)
{
    (void)rank;
    ((struct fake *)ctx)->fences++;
}

static int f_respond(void *ctx, int rank, const char *buf, size_t len)
{
    struct fake *f = ctx;

    (void)rank;
    if (f->respond_fails || f->outlen + len >= sizeof f->out)
        return -1;
    memcpy(f->out + f->outlen, buf, len);
    f->outlen += len;
    f->out[f->outlen] = '\0';
    return 0;
}

static void f_abort(void *ctx, int rank, int code, const char *msg)
{
    struct fake *f = ctx;

    (void)rank;
    f->aborts++;
    f->abort_code = code;
    snprintf(f->abort_msg, sizeof f->abort_msg, "%s", msg);
}

static const struct pmi_wire_ops ops = { f_put, f_get, f_fence, f_respond,
                                         f_abort };
static const struct pmi_wire_job job = { .size = 4, .kvsname = "kvs_7_0",
                                         .mapping = "(vector,(0,2,2))" };

/* Feed s (whole, or one byte at a time); what was answered since. */
static const char *feed(struct pmi_wire *w, struct fake *f, const char *s,
                        int bytewise, int *rc)
{
    struct err err = { "" };
    size_t n = strlen(s);

    f->outlen = 0;
    f->out[0] = '\0';
    *rc = 0;
    for (size_t i = 0; bytewise && i < n && *rc == 0; i++)
        *rc = pmi_wire_feed(w, s + i, 1, &err);
    if (!bytewise)
        *rc = pmi_wire_feed(w, s, n, &err);
    return f->out;
}

static void test_pmi1(int bytewise)
{
    struct fake f = { 0 };
    struct err err = { "" };
    struct pmi_wire *w = pmi_wire_create(&job, &ops, &f, 1, &err);
    int rc;

    is_str(feed(w, &f, "cmd=init pmi_version=1 pmi_subversion=1\n", bytewise,
                &rc), "cmd=response_to_init pmi_version=1 pmi_subversion=1 "
           "rc=0\n", "PMI-1 init");
    is_str(feed(w, &f, "cmd=get_maxes\ncmd=get_appnum\n", bytewise, &rc),
           "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024 rc=0\n"
           "cmd=appnum appnum=0 rc=0\n", "maxes and appnum, two in one");
    is_str(feed(w, &f, "cmd=get_my_kvsname\n", bytewise, &rc),
           "cmd=my_kvsname kvsname=kvs_7_0 rc=0\n", "kvsname");
    is_str(feed(w, &f, "cmd=get kvsname=kvs_7_0 key=PMI_process_mapping\n",
                bytewise, &rc), "cmd=get_result rc=0 msg=success "
           "value=(vector,(0,2,2))\n", "the process mapping");
    is_str(feed(w, &f, "cmd=put kvsname=kvs_7_0 key=-bcast-1-1 value=2F64\n",
                bytewise, &rc), "cmd=put_result rc=0 msg=success\n", "put");
    is_str(feed(w, &f, "cmd=barrier_in\n", bytewise, &rc), "",
           "barrier: no answer yet");
    is_int(f.fences, 1, "the fence callback ran");
    ok(pmi_wire_in_fence(w), "in the fence");
    f.outlen = 0;
    is_int(pmi_wire_fence_done(w, 0, &err), 0, "fence done");
    is_str(f.out, "cmd=barrier_out rc=0\n", "barrier_out");
    is_str(feed(w, &f, "cmd=get kvsname=kvs_7_0 key=-bcast-1-1\n", bytewise,
                &rc), "cmd=get_result rc=0 msg=success value=2F64\n", "get");
    is_str(feed(w, &f, "cmd=get kvsname=kvs_7_0 key=nope\n", bytewise, &rc),
           "cmd=get_result rc=-1 msg=key_not_found\n", "get of no key");
    is_str(feed(w, &f, "cmd=get_universe_size\n", bytewise, &rc),
           "cmd=universe_size size=4 rc=0\n", "universe size");
    ok(!pmi_wire_finalized(w), "not finalized yet");
    is_str(feed(w, &f, "cmd=finalize\n", bytewise, &rc),
           "cmd=finalize_ack rc=0\n", "finalize");
    ok(pmi_wire_finalized(w), "finalized");
    is_int(rc, 0, "no error");
    pmi_wire_destroy(w);
}

/* body with PMI-2's 6-character length before it (rotating buffers). */
static const char *v2(const char *body)
{
    static char bufs[4][2048];
    static int next;
    char *b = bufs[next++ % 4];

    snprintf(b, sizeof bufs[0], "%6zu%s", strlen(body), body);
    return b;
}

static void test_pmi2(int bytewise)
{
    struct fake f = { 0 };
    struct err err = { "" };
    struct pmi_wire *w = pmi_wire_create(&job, &ops, &f, 3, &err);
    int rc;

    is_str(feed(w, &f, "cmd=init pmi_version=2 pmi_subversion=0\n", bytewise,
                &rc), "cmd=response_to_init pmi_version=2 pmi_subversion=0 "
           "rc=0\n", "PMI-2 init line");
    is_str(feed(w, &f, v2("cmd=fullinit;pmirank=3;threaded=FALSE;"),
                bytewise, &rc),
           v2("cmd=fullinit-response;pmi-version=2;pmi-subversion=0;"
              "rank=3;size=4;appnum=0;debugged=FALSE;pmiverbose=FALSE;rc=0;"),
           "fullinit");
    is_str(feed(w, &f, v2("cmd=job-getid;"), bytewise, &rc),
           v2("cmd=job-getid-response;jobid=kvs_7_0;rc=0;"), "job-getid");
    is_str(feed(w, &f, v2("cmd=info-getjobattr;key=PMI_process_mapping;"),
                bytewise, &rc), v2("cmd=info-getjobattr-response;"
           "found=TRUE;value=(vector,(0,2,2));rc=0;"), "getjobattr");
    is_str(feed(w, &f, v2("cmd=kvs-put;key=bc-3;value=AB;"), bytewise, &rc),
           v2("cmd=kvs-put-response;rc=0;"), "kvs-put");
    is_str(feed(w, &f, v2("cmd=kvs-fence;thrid=0x5555deadbeef;"), bytewise,
                &rc), "", "kvs-fence waits");
    f.outlen = 0;
    pmi_wire_fence_done(w, 0, &err);
    is_str(f.out, v2("cmd=kvs-fence-response;rc=0;thrid=0x5555deadbeef;"),
           "the fence's answer echoes thrid");
    is_str(feed(w, &f, v2("cmd=kvs-get;jobid=kvs_7_0;key=bc-3;"), bytewise,
                &rc), v2("cmd=kvs-get-response;found=TRUE;value=AB;rc=0;"),
           "kvs-get");
    is_str(feed(w, &f, v2("cmd=kvs-get;key=bc-99;"), bytewise, &rc),
           v2("cmd=kvs-get-response;found=FALSE;rc=0;"), "kvs-get of no key");
    is_str(feed(w, &f, v2("cmd=info-putnodeattr;key=k;value=v;"), bytewise,
                &rc), v2("cmd=info-putnodeattr-response;rc=0;"),
           "putnodeattr");
    is_str(feed(w, &f, v2("cmd=info-getnodeattr;key=k;wait=FALSE;"),
                bytewise, &rc), v2("cmd=info-getnodeattr-response;"
           "found=TRUE;value=v;rc=0;"), "getnodeattr");
    is_str(feed(w, &f, v2("cmd=name-publish;name=svc;port=p;"), bytewise,
                &rc), v2("cmd=name-publish-response;rc=1;"
           "errmsg=not supported by dlrun;"), "publish: an error at once");
    is_str(feed(w, &f, v2("cmd=finalize;"), bytewise, &rc),
           v2("cmd=finalize-response;rc=0;"), "finalize");
    is_int(rc, 0, "no error");
    pmi_wire_destroy(w);
}

static void test_abort_and_spawn(void)
{
    struct fake f = { 0 };
    struct err err = { "" };
    struct pmi_wire *w = pmi_wire_create(&job, &ops, &f, 0, &err);
    int rc;

    is_str(feed(w, &f, "mcmd=spawn\nnprocs=2\nexecname=a\nendcmd\n", 0, &rc),
           "cmd=spawn_result rc=-1 msg=not_supported_by_dlrun\n",
           "spawn: an error at once");
    is_str(feed(w, &f, "cmd=lookup_name service=x\n", 0, &rc),
           "cmd=lookup_result rc=-1 msg=not_supported_by_dlrun\n",
           "lookup: an error at once");
    feed(w, &f, "cmd=abort exitcode=7\n", 0, &rc);
    is_int(f.aborts, 1, "abort called");
    is_int(f.abort_code, 7, "with its code");
    feed(w, &f, v2("cmd=abort;isworld=TRUE;msg=it broke;"), 0, &rc);
    is_int(f.abort_code, -1, "PMI-2's abort has no code");
    is_str(f.abort_msg, "it broke", "its message");
    pmi_wire_destroy(w);
}

/* Each of these makes feed fail (the rank is dropped). */
static void test_refused(void)
{
    static const char *const bad[] = {
        "hello\n", "cmd=\n", "cmd=frobnicate\n", "  x12cmd=x;",
        "999999cmd=fullinit;", "cmd=barrier_in\ncmd=barrier_in\n",
        "cmd=init\0 pmi_version=1\n",
    };
    static const char *const what[] = {
        "no cmd=", "an empty command", "an unknown command",
        "a bad length", "a length over the limit", "a second barrier",
        "a NUL byte",
    };
    char big[PMI_WIRE_MSG_MAX + 20];

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct fake f = { 0 };
        struct err err = { "" };
        struct pmi_wire *w = pmi_wire_create(&job, &ops, &f, 0, &err);
        size_t n = i == 6 ? 25 : strlen(bad[i]);
        ok(pmi_wire_feed(w, bad[i], n, &err) < 0 && err.msg[0], what[i]);
        pmi_wire_destroy(w);
    }
    memset(big, 'a', sizeof big);
    memcpy(big, "cmd=put key=k value=", 20);
    {
        struct fake f = { 0 };
        struct err err = { "" };
        struct pmi_wire *w = pmi_wire_create(&job, &ops, &f, 0, &err);
        ok(pmi_wire_feed(w, big, sizeof big, &err) < 0, "a line too long");
        pmi_wire_destroy(w);
    }
}

static void test_limits(void)
{
    struct fake f = { 0 };
    struct err err = { "" };
    struct pmi_wire *w = pmi_wire_create(&job, &ops, &f, 0, &err);
    char line[1200];
    int rc;

    snprintf(line, sizeof line, "cmd=put key=k value=%01100d\n", 0);
    is_str(feed(w, &f, line, 0, &rc), "cmd=put_result rc=-1 msg=refused\n",
           "a value over 1024 bytes refused, the rank kept");
    f.respond_fails = 1;
    ok(pmi_wire_feed(w, "cmd=get_maxes\n", 14, &err) < 0, "respond failed");
    ok(pmi_wire_fence_done(w, 0, &err) < 0, "no fence to end");
    pmi_wire_destroy(w);
    ok(!pmi_wire_create(&job, &ops, &f, 4, &err), "a rank outside the job");
}

static void test_mapping(void)
{
    char buf[128];
    static const int block[] = { 0, 0, 0, 0, 1, 1, 1, 1 };
    static const int rr[] = { 0, 1, 0, 1 };
    static const int uneven[] = { 0, 0, 0, 1, 1, 2, 2 };

    pmi_wire_mapping(block, 8, buf, sizeof buf);
    is_str(buf, "(vector,(0,2,4))", "two nodes of four");
    pmi_wire_mapping(rr, 4, buf, sizeof buf);
    is_str(buf, "(vector,(0,2,1),(0,2,1))", "round robin");
    pmi_wire_mapping(uneven, 7, buf, sizeof buf);
    is_str(buf, "(vector,(0,1,3),(1,2,2))", "uneven");
    pmi_wire_mapping(block, 1, buf, sizeof buf);
    is_str(buf, "(vector,(0,1,1))", "one rank");
    is_int(pmi_wire_mapping(rr, 4, buf, 12), -1, "too small a buffer");
    is_int(pmi_wire_mapping(rr, 0, buf, sizeof buf), -1, "no ranks");
}

int main(void)
{
    test_pmi1(0);
    test_pmi1(1);
    test_pmi2(0);
    test_pmi2(1);
    test_abort_and_spawn();
    test_refused();
    test_limits();
    test_mapping();
    return tap_done();
}
