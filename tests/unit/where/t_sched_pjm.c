/* t_sched_pjm.c - the Fujitsu PJM allocation source on its own (detect
 * and read): the node file, its repeats as virtual nodes, ranks per node
 * and in all from the --mpi variables, and every disagreement between
 * the job manager's variables refused, naming both. */
#include "where/alloc.h"
#include "fixture.h"
#include "tap.h"

#define PJM "pjm"

static const struct source_row rows[] = {
    { "node file, 4 per node", PJM, { "PJM_JOBID=5", "PJM_O_NODEINF=@FILE@",
      "PJM_PROC_BY_NODE=4", "PJM_MPI_PROC=8", NULL }, "a\nb\n", { 0 }, 1,
      "a:4,b:4", "5" },
    { "repeats are virtual nodes: a slot each", PJM, { "PJM_JOBID=6",
      "PJM_O_NODEINF=@FILE@", "PJM_VNODES=3", NULL }, "a\na\nb\n", { 0 }, 1,
      "a:2,b:1", "6" },
    { "a node file alone is enough", PJM, { "PJM_O_NODEINF=@FILE@", NULL },
      "a\n", { 0 }, 1, "a:1", NULL },
    { "PJM_NODE disagrees", PJM, { "PJM_JOBID=5", "PJM_O_NODEINF=@FILE@",
      "PJM_NODE=3", NULL }, "a\nb\n", { 0 }, 1, NULL,
      "PJM_NODE=3 but PJM_O_NODEINF names 2 hosts" },
    { "PJM_VNODES disagrees", PJM, { "PJM_JOBID=5", "PJM_O_NODEINF=@FILE@",
      "PJM_VNODES=5", NULL }, "a\na\nb\n", { 0 }, 1, NULL,
      "PJM_VNODES=5 but PJM_O_NODEINF has 3 lines" },
    { "more ranks than slots", PJM, { "PJM_JOBID=5", "PJM_O_NODEINF=@FILE@",
      "PJM_PROC_BY_NODE=4", "PJM_MPI_PROC=9", NULL }, "a\nb\n", { 0 }, 1, NULL,
      "PJM_MPI_PROC=9 but PJM_O_NODEINF and PJM_PROC_BY_NODE give 8 slots" },
    { "a count that is not a number", PJM, { "PJM_JOBID=5",
      "PJM_O_NODEINF=@FILE@", "PJM_PROC_BY_NODE=x", NULL }, "a\n", { 0 }, 1,
      NULL, "PJM_PROC_BY_NODE" },
    { "several nodes, no node file", PJM, { "PJM_JOBID=5", "PJM_NODE=2",
      NULL }, NULL, { 0 }, 1, NULL,
      "PJM_NODE=2 but PJM_O_NODEINF is not set" },
    { "node file missing", PJM, { "PJM_JOBID=5",
      "PJM_O_NODEINF=/nonexistent/nodeinf", NULL }, NULL, { 0 }, 1, NULL,
      "PJM_O_NODEINF" },
    { "not a PJM job", PJM, { "PBS_JOBID=1", NULL }, NULL, { 0 }, 0, NULL,
      "neither PJM_JOBID nor PJM_O_NODEINF" },
};

int main(void)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        source_row_check(&rows[i]);
    return tap_done();
}
