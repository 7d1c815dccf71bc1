/* t_nodeshape.c - a profile's node: line, and the hwloc XML made of it
 * planned on as dlrun plans on a real node's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "place/bind.h"
#include "place/nodeshape.h"
#include "place/placement.h"
#include "tap.h"
#include "place/topo.h"

static void test_parse(void)
{
    static const struct {
        const char *s;
        int ok, packages, cores, pus, gpus;
        const char *msg;    /* part of the error */
    } cases[] = {
        { "package:2 core:38 gpu:8", 1, 2, 38, 1, 8, NULL },
        { "  socket:2\tcore:20 pu:2 gpu:4 ", 1, 2, 20, 2, 4, NULL },
        { "core:8", 1, 1, 8, 1, 0, NULL },
        { "gpu:4 core:10 package:1", 1, 1, 10, 1, 4, NULL },
        { "", 0, 0, 0, 0, 0, "no core:N" },
        { "package:2 gpu:8", 0, 0, 0, 0, 0, "no core:N" },
        { "package:2 sockt:2 core:4", 0, 0, 0, 0, 0, "'sockt:2': unknown word" },
        { "core:0", 0, 0, 0, 0, 0, "core from 1 to 1024" },
        { "core:x", 0, 0, 0, 0, 0, "not a number" },
        { "core:", 0, 0, 0, 0, 0, "expected core:COUNT" },
        { "core", 0, 0, 0, 0, 0, "expected core:COUNT" },
        { "core:99999999999", 0, 0, 0, 0, 0, "expected core:COUNT" },
        { "core:4 core:4", 0, 0, 0, 0, 0, "core given twice" },
        { "package:2 socket:2 core:4", 0, 0, 0, 0, 0, "package given twice" },
        { "package:3 core:4 gpu:4", 0, 0, 0, 0, 0, "do not spread evenly" },
        { "package:64 core:1024", 0, 0, 0, 0, 0, "at most 1024" },
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct nodeshape n = { -1, -1, -1, -1 };
        struct err e = { "" };
        int rc = nodeshape_parse(cases[i].s, &n, &e);
        char what[160];

        snprintf(what, sizeof what, "node '%s'", cases[i].s);
        if (!cases[i].ok) {
            ok(rc < 0 && strstr(e.msg, cases[i].msg) && n.packages == -1,
               what);
            if (!strstr(e.msg, cases[i].msg))
                printf("#   got '%s'\n", e.msg);
            continue;
        }
        ok(rc == 0 && n.packages == cases[i].packages &&
           n.cores == cases[i].cores && n.pus == cases[i].pus &&
           n.gpus == cases[i].gpus, what);
    }
}

/* The XML through hwloc: what topo_describe counts, and Neuron's and
 * SQUID's ppr:4:socket on it. */
static struct topo *load(const struct nodeshape *n)
{
    char path[] = "/tmp/t_nodeshape.XXXXXX";
    char *xml = nodeshape_xml(n);
    struct err e = { "" };
    struct topo *t = NULL;
    int fd = mkstemp(path);

    if (fd >= 0 && xml && write(fd, xml, strlen(xml)) == (ssize_t)strlen(xml))
        t = topo_load(path, &e);
    if (!t)
        printf("# topo_load: %s\n", e.msg);
    if (fd >= 0) {
        close(fd);
        unlink(path);
    }
    free(xml);
    return t;
}

/* placement_where on the same node: which sockets hold a mask's CPUs
 * (threads 0-75 on socket 0, 76-151 on socket 1). */
static void test_where(const struct topo *t)
{
    cpu_set_t m;
    char buf[32];

    CPU_ZERO(&m);
    placement_where(t, &m, PLACE_SOCKET, buf, sizeof buf);
    is_str(buf, "-", "where: an empty mask is nowhere");
    CPU_SET(3, &m);
    placement_where(t, &m, PLACE_SOCKET, buf, sizeof buf);
    is_str(buf, "0", "where: CPU 3 on socket 0");
    placement_where(t, &m, PLACE_NUMA, buf, sizeof buf);
    is_str(buf, "0", "where: and NUMA node 0");
    CPU_SET(100, &m);
    placement_where(t, &m, PLACE_SOCKET, buf, sizeof buf);
    is_str(buf, "0,1", "where: CPUs 3 and 100 on sockets 0,1");
    CPU_ZERO(&m);
    CPU_SET(151, &m);
    placement_where(t, &m, PLACE_NUMA, buf, sizeof buf);
    is_str(buf, "1", "where: the last thread on NUMA node 1");
}

static void test_xml(void)
{
    struct nodeshape n;
    struct err e = { "" };
    struct topo_summary s;
    struct bind_opts o;
    struct bind_rank r[8];
    struct topo *t;
    char d[80];

    nodeshape_parse("package:2 core:38 pu:2 gpu:8", &n, &e);
    nodeshape_describe(&n, d, sizeof d);
    is_str(d, "2 sockets x 38 cores x 2 threads, 8 GPUs", "describe");
    t = load(&n);
    if (!ok(t != NULL, "the XML loads"))
        return;
    topo_describe(t, &s);
    ok(s.packages == 2 && s.cores == 76 && s.pus == 152 && s.gpus == 8,
       "2 sockets, 76 cores, 152 PUs, 8 GPUs");
    memset(&o, 0, sizeof o);
    bind_parse_map_by("ppr:4:socket", &o, &e);
    bind_parse_bind_to("core", &o, &e);
    ok(bind_node(t, 8, &o, NULL, r, &e) == 0, "ppr:4:socket with 8 ranks");
    is_str(r[0].cpus, "0-17", "  rank 0: socket 0's first quarter (threads too)");
    is_int(r[3].gpu, 3, "  rank 3: GPU 3 (socket 0)");
    is_str(r[4].cpus, "76-93", "  rank 4: socket 1");
    is_int(r[4].gpu, 4, "  rank 4: GPU 4 (socket 1)");
    ok(bind_node(t, 2, &o, "0,1", r, &e) < 0 && strstr(e.msg, "ppr:4:socket"),
       "ppr:4:socket with 2 ranks: refused");
    test_where(t);
    topo_free(t);
}

int main(void)
{
    test_parse();
    test_xml();
    return tap_done();
}
