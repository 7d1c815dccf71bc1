/* tap.h - a minimal TAP producer for the unit tests (header only).
 *
 * Each t_<module>.c includes this, calls ok()/is_int()/is_str() and ends
 * with `return tap_done();`, which prints the plan and the closing
 * "N passed, N failed" line and returns non-zero when anything failed. */
#ifndef DLRUN_TAP_H
#define DLRUN_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

static inline int tap_ok(int cond, const char *file, int line, const char *what)
{
    tap_n++;
    if (!cond)
        tap_failed++;
    printf("%sok %d - %s\n", cond ? "" : "not ", tap_n, what);
    if (!cond)
        printf("#   failed at %s:%d\n", file, line);
    fflush(stdout);
    return cond;
}

static inline int tap_is_int(long got, long want, const char *file, int line,
                             const char *what)
{
    int r = tap_ok(got == want, file, line, what);
    if (!r)
        printf("#   got %ld, want %ld\n", got, want);
    return r;
}

static inline int tap_is_str(const char *got, const char *want,
                             const char *file, int line, const char *what)
{
    int same = (got && want) ? strcmp(got, want) == 0 : got == want;
    int r = tap_ok(same, file, line, what);
    if (!r)
        printf("#   got  '%s'\n#   want '%s'\n", got ? got : "(null)",
               want ? want : "(null)");
    return r;
}

static inline int tap_done(void)
{
    printf("1..%d\n", tap_n);
    printf("%d passed, %d failed\n", tap_n - tap_failed, tap_failed);
    return tap_failed != 0;
}

/* The whole test skipped, saying why (a feature this build lacks): one
 * passing line "# skip: WHY" and the plan. */
static inline int tap_skip_all(const char *why)
{
    char line[256];

    snprintf(line, sizeof line, "# skip: %s", why);
    tap_ok(1, __FILE__, __LINE__, line);
    return tap_done();
}

#define ok(cond, what) tap_ok(!!(cond), __FILE__, __LINE__, (what))
#define is_int(got, want, what) \
    tap_is_int((long)(got), (long)(want), __FILE__, __LINE__, (what))
#define is_str(got, want, what) tap_is_str((got), (want), __FILE__, __LINE__, (what))

#endif
