/* t_placement.c - which sockets and NUMA nodes a rank's CPUs are on, for
 * `dlrun plan --profile`: on synthetic machines (PUs numbered in order,
 * so the answer is known without hwloc) and a saved one, for one CPU,
 * CPUs across sockets, no CPU, CPUs the machine does not have, and a
 * buffer too small for the whole list. */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "place/placement.h"
#include "tap.h"
#include "place/topo.h"

/* A mask of CPUs first..last. */
static cpu_set_t cpus(int first, int last)
{
    cpu_set_t m;

    CPU_ZERO(&m);
    for (int c = first; c <= last; c++)
        CPU_SET(c, &m);
    return m;
}

static const char *where(const struct topo *t, cpu_set_t m,
                         enum placement_kind k)
{
    static char buf[64];

    placement_where(t, &m, k, buf, sizeof buf);
    return buf;
}

int main(void)
{
    struct err err = { "" };
    /* 4 packages of 2 NUMA nodes of 2 cores of 2 PUs: 32 PUs, package p
     * holds PUs 8p..8p+7, NUMA node n holds 4n..4n+3 */
    struct topo *t = topo_load("synthetic:package:4 numa:2 core:2 pu:2", &err);
    char small[4];
    cpu_set_t m;

    if (!ok(t != NULL, "synthetic machine")) {
        printf("# %s\n", err.msg);
        return tap_done();
    }
    is_str(where(t, cpus(0, 0), PLACE_SOCKET), "0", "CPU 0: socket 0");
    is_str(where(t, cpus(0, 0), PLACE_NUMA), "0", "CPU 0: NUMA 0");
    is_str(where(t, cpus(12, 13), PLACE_SOCKET), "1", "CPUs 12-13: socket 1");
    is_str(where(t, cpus(12, 13), PLACE_NUMA), "3", "CPUs 12-13: NUMA 3");
    is_str(where(t, cpus(7, 8), PLACE_SOCKET), "0,1", "across a socket boundary");
    is_str(where(t, cpus(0, 31), PLACE_NUMA), "0,1,2,3,4,5,6,7", "every NUMA node");
    CPU_ZERO(&m);
    CPU_SET(3, &m);
    CPU_SET(30, &m);
    is_str(where(t, m, PLACE_SOCKET), "0,3", "two CPUs far apart");
    is_str(where(t, cpus(0, -1), PLACE_SOCKET), "-", "no CPU (unbound): -");
    is_str(where(t, cpus(100, 120), PLACE_NUMA), "-",
           "CPUs this machine does not have: -");
    placement_where(t, &(cpu_set_t){ 0 }, PLACE_SOCKET, small, sizeof small);
    is_str(small, "-", "small buffer, unbound");
    m = cpus(0, 31);
    placement_where(t, &m, PLACE_NUMA, small, sizeof small);
    ok(strlen(small) < sizeof small && strncmp(small, "0,1", 3) == 0,
       "a list that does not fit is cut, NUL-terminated");
    topo_free(t);

    t = topo_load("synthetic:core:4 pu:1", &err);
    ok(t != NULL, "a machine without package level");
    if (t) {
        is_str(where(t, cpus(0, 3), PLACE_NUMA), "0", "one NUMA node");
        topo_free(t);
    }

    t = topo_load("tests/topo/gpu4-numa.xml", &err);
    if (t) {
        /* PU os index 0 is on the first socket whatever the numbering */
        is_str(where(t, cpus(0, 0), PLACE_SOCKET), "0", "gpu4-numa: CPU 0");
        is_str(where(t, cpus(0, 15), PLACE_SOCKET), "0,1", "gpu4-numa: all");
        topo_free(t);
    }
    return tap_done();
}
