/* script.h - what `dlrun script` and `dlrun submit` share: the options,
 * the site profile and the rendered job script. */
#ifndef DLRUN_SCRIPT_H
#define DLRUN_SCRIPT_H

struct script_result {
    char *text;             /* the job script (owned) */
    int sched;              /* enum sched */
    const char *output;     /* -o FILE, or NULL (borrowed from argv) */
    int dry_run;            /* submit --dry-run */
    int done;               /* help or --list-profiles printed: exit 0 */
};

/* Parse argv (argv[0] is "script" or "submit") and render the script.
 * Returns EXIT_OK with r filled (r->done: nothing more to do), or an
 * exit code after printing the one-line error. */
int script_build(int argc, char **argv, int submit, struct script_result *r);

/* Write text to path (not through a symbolic link) with the mode the
 * umask gives plus u+x.  EXIT_OK or EXIT_FAIL (printed). */
int script_write(const char *path, const char *text);

/* The same into fd, open for writing (closed here; path names it in
 * errors, borrowed). */
int script_write_fd(int fd, const char *path, const char *text);

#endif
