/* t_sched_nqsv.c - the NQSV allocation source on its own (detect and
 * read, without alloc.c's choice among sources): NQSV's mpirun options in
 * their spellings, and each malformed value refused with the variable
 * named. */
#include "where/alloc.h"
#include "fixture.h"
#include "tap.h"

#define NQSV "nqsv"

static const struct source_row rows[] = {
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
};

int main(void)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        source_row_check(&rows[i]);
    return tap_done();
}
