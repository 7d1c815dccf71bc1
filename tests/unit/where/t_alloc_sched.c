/* t_alloc_sched.c - the PBS, NQSV and LSF allocation sources on their
 * own (detect and read, without alloc.c's choice among sources): node
 * files, NQSV's mpirun options in their spellings, LSF's host and slot
 * pairs, and each malformed value refused with the variable named. */
#include "where/alloc.h"
#include "fixture.h"
#include "tap.h"

#define PBS (&alloc_source_pbs)
#define NQSV (&alloc_source_nqsv)
#define LSF (&alloc_source_lsf)

static const struct source_row rows[] = {
    { "pbs node file", PBS, { "PBS_NODEFILE=@FILE@", "PBS_JOBID=7.pbs", NULL },
      "n1\nn1\nn2\n", { 0 }, 1, "n1:2,n2:1", "7.pbs" },
    { "pbs without a job id", PBS, { "PBS_NODEFILE=@FILE@", NULL }, "n1\n",
      { 0 }, 1, "n1:1", NULL },
    { "pbs node file missing", PBS, { "PBS_NODEFILE=/nonexistent/nodes", NULL },
      NULL, { 0 }, 1, NULL, "PBS_NODEFILE" },
    { "pbs without its variable", PBS, { "PBS_JOBID=7", NULL }, NULL, { 0 }, 0,
      NULL, "PBS_NODEFILE is not set" },
    { "nqsv -hostfile FILE", NQSV, { "NQSV_MPIOPTS=-v -hostfile @FILE@ -np 4",
      NULL }, "a:2\nb:2\n", { 0 }, 1, "a:2,b:2", NULL },
    { "nqsv --machinefile=FILE", NQSV, { "NQSV_MPIOPTS=--machinefile=@FILE@",
      NULL }, "a\n", { 0 }, 1, "a:1", NULL },
    { "nqsv -f FILE", NQSV, { "NQSV_MPIOPTS=-f @FILE@", NULL }, "a slots=3\n",
      { 0 }, 1, "a:3", NULL },
    { "nqsv -hosts LIST", NQSV, { "NQSV_MPIOPTS=-hosts n[1-2]:4", NULL }, NULL,
      { 0 }, 1, "n1:4,n2:4", NULL },
    { "nqsv an option that only looks like one", NQSV,
      { "NQSV_MPIOPTS=-hostsx n1 -v", NULL }, NULL, { 0 }, 1, NULL,
      "names no host file" },
    { "nqsv -hostfile without a value", NQSV, { "NQSV_MPIOPTS=-v -hostfile",
      NULL }, NULL, { 0 }, 1, NULL, "pass --hostfile" },
    { "lsf pairs", LSF, { "LSB_MCPU_HOSTS=hA 2 hB 1", "LSB_JOBID=99", NULL },
      NULL, { 0 }, 1, "hA:2,hB:1", "99" },
    { "lsf a host twice", LSF, { "LSB_MCPU_HOSTS=hA 2 hA 3 ", NULL }, NULL,
      { 0 }, 1, "hA:5", NULL },
    { "lsf zero slots", LSF, { "LSB_MCPU_HOSTS=hA 0", NULL }, NULL, { 0 }, 1,
      NULL, "host hA has 0 slots" },
    { "lsf a name without count", LSF, { "LSB_MCPU_HOSTS=hA 2 hB", NULL }, NULL,
      { 0 }, 1, NULL, "cannot read \"hB\"" },
    { "lsf empty", LSF, { "LSB_MCPU_HOSTS=", NULL }, NULL, { 0 }, 1, NULL,
      "expected pairs" },
    { "lsf without its variable", LSF, { "LSB_JOBID=1", NULL }, NULL, { 0 }, 0,
      NULL, "LSB_MCPU_HOSTS is not set" },
};

int main(void)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        source_row_check(&rows[i]);
    return tap_done();
}
