/* privdirs.h - the private folders dlrun makes for itself with mkdtemp
 * (the PMIx server's, and the broker's or the relay's own when the job's
 * folder cannot hold their socket), listed in memory shared with the
 * guard (lib/run/guard.h): when dlrun dies without cleaning up (SIGKILL),
 * the guard removes every folder still listed, as it removes the job's.
 *
 * The list lives in an anonymous shared mapping made at the first call of
 * any function here; the guard calls privdirs_share() before it forks, so
 * that it sees what is listed after.  A slot's path is written before the
 * slot is marked used, so a dlrun killed in between leaves no half path.
 * At most PRIVDIRS_MAX folders at once (a job makes three); past that a
 * folder is made but not listed. */
#ifndef DLRUN_PRIVDIRS_H
#define DLRUN_PRIVDIRS_H

#define PRIVDIRS_MAX 16

/* Make the shared list now (the guard, before it forks).  0 / -1. */
int privdirs_share(void);

/* mkdtemp(tmpl) (tmpl: "PATH/NAME.XXXXXX", changed in place), the folder
 * listed.  tmpl, or NULL with errno as mkdtemp. */
char *privdirs_mkdtemp(char *tmpl);

/* dir (as listed) is removed, or about to be: no longer listed. */
void privdirs_forget(const char *dir);

/* Remove every listed folder with what is in it (safefile_remove_dir:
 * only a folder of ours, never through a link) and empty the list: the
 * guard, once dlrun is gone. */
void privdirs_remove_all(void);

#endif
