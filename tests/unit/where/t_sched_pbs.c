/* t_sched_pbs.c - the PBS allocation source on its own (detect and
 * read, without alloc.c's choice among sources): node files, repeats as
 * slots, and a missing file or variable refused with the variable named. */
#include "where/alloc.h"
#include "fixture.h"
#include "tap.h"

#define PBS "pbs"

static const struct source_row rows[] = {
    { "pbs node file", PBS, { "PBS_NODEFILE=@FILE@", "PBS_JOBID=7.pbs", NULL },
      "n1\nn1\nn2\n", { 0 }, 1, "n1:2,n2:1", "7.pbs" },
    { "pbs without a job id", PBS, { "PBS_NODEFILE=@FILE@", NULL }, "n1\n",
      { 0 }, 1, "n1:1", NULL },
    { "pbs node file missing", PBS, { "PBS_NODEFILE=/nonexistent/nodes", NULL },
      NULL, { 0 }, 1, NULL, "PBS_NODEFILE" },
    { "pbs without its variable", PBS, { "PBS_JOBID=7", NULL }, NULL, { 0 }, 0,
      NULL, "PBS_NODEFILE is not set" },
};

int main(void)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        source_row_check(&rows[i]);
    return tap_done();
}
