/* t_sched_lsf.c - the LSF allocation source on its own (detect and
 * read, without alloc.c's choice among sources): LSF's host and slot
 * pairs, and each malformed value refused with the variable named. */
#include "where/alloc.h"
#include "fixture.h"
#include "tap.h"

#define LSF "lsf"

static const struct source_row rows[] = {
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
