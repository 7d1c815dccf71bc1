/* t_pmimap.c - PMI_process_mapping as Hydra, Slurm and Flux publish it:
 * block, cyclic, uneven and repeated vectors into each rank's node and
 * its place there (the mappings mpiexec.hydra 4.0 printed for the
 * layouts named), and what is refused. */
#include <string.h>

#include "where/pmimap.h"
#include "tap.h"

/* s for size ranks as a string of node digits ("0011"), or "ERR". */
static const char *nodes_of(const char *s, int size, int *nnodes)
{
    static char out[64];
    int node[64];
    struct err err = { "" };

    if (pmimap_nodes(s, size, node, nnodes, &err) < 0)
        return "ERR";
    for (int r = 0; r < size; r++)
        out[r] = (char)('0' + node[r]);
    out[size] = '\0';
    return out;
}

static void layouts(void)
{
    int n = 0;

    is_str(nodes_of("(vector,(0,2,2))", 4, &n), "0011",
           "-n 4 -ppn 2 on two hosts: block");
    is_int(n, 2, "  two nodes");
    is_str(nodes_of("(vector,(0,2,1))", 4, &n), "0101",
           "-n 4 -ppn 1 on two hosts: the vector repeats, cyclic");
    is_str(nodes_of("(vector,(0,1,1))", 3, &n), "000",
           "-n 3 on one host: (0,1,1) repeated keeps every rank on node 0");
    is_int(n, 1, "  one node");
    is_str(nodes_of("(vector,(0,1,2),(1,1,3))", 5, &n), "00111",
           "-hosts a:2,b:3 -n 5: uneven blocks");
    is_str(nodes_of("(vector,(0,1,2),(1,1,3))", 7, &n), "0011100",
           "  7 ranks: the blocks repeat in order");
    is_str(nodes_of("(vector,(0,4,2))", 4, &n), "0011",
           "fewer ranks than the blocks hold: the first nodes only");
    is_int(n, 2, "  two nodes used");
    is_str(nodes_of(" ( vector , (0, 2 ,1) ) ", 2, &n), "01",
           "spaces between the words");
    is_str(nodes_of("(vector,(1,1,2),(0,1,2))", 4, &n), "1100",
           "a block may start on a later node");
}

static void refused(void)
{
    int n = 0, node[8];
    struct err err = { "" };
    static const char *const bad[] = {
        "", "(vector)", "(vector,)", "vector,(0,1,1)", "(vector,(0,1))",
        "(vector,(0,1,1)", "(vector,(0,1,1)))", "(vector,(0,0,1))",
        "(vector,(0,1,0))", "(vector,(-1,1,1))", "(vector,(0,1,1x))",
        "(vector,(99999999999,1,1))", "(vector,(16777215,2,1))",
        "(list,(0,1,1))", "(vector,(0,1,1)) trailing",
    };

    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        is_str(nodes_of(bad[i], 4, &n), "ERR", bad[i]);
    ok(pmimap_nodes("(vector,(1,1,4))", 4, node, &n, &err) < 0 &&
       strstr(err.msg, "gives node 0 no rank"), "a node without a rank: named");
    ok(pmimap_nodes("(vector,(5,1,1))", 4, node, &n, &err) < 0 &&
       strstr(err.msg, "names 6 nodes for 4 ranks"),
       "more nodes than ranks: refused before counting them");
    ok(pmimap_nodes("(vector,(0,1,1))", 0, node, &n, &err) < 0,
       "no ranks: refused");
}

static void local(void)
{
    int node[] = { 0, 1, 0, 1, 1 }, l, ls;

    pmimap_local(node, 5, 3, &l, &ls);
    is_int(l, 1, "rank 3 is the second on node 1");
    is_int(ls, 3, "  of three");
    pmimap_local(node, 5, 0, &l, &ls);
    is_int(l * 10 + ls, 2, "rank 0 the first of two on node 0");
}

int main(void)
{
    layouts();
    refused();
    local();
    return tap_done();
}
