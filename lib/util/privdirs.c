/* privdirs.c - see privdirs.h. */
#include "util/privdirs.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/safefile.h"

struct slot {
    int used;               /* set (release) after path is whole */
    char path[PATH_MAX];
};

static struct slot *slots;  /* PRIVDIRS_MAX of them, MAP_SHARED */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* With lock held. */
static int share_locked(void)
{
    void *m;

    if (slots)
        return 0;
    m = mmap(NULL, PRIVDIRS_MAX * sizeof *slots, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    slots = m;
    return 0;
}

int privdirs_share(void)
{
    int rc;

    pthread_mutex_lock(&lock);
    rc = share_locked();
    pthread_mutex_unlock(&lock);
    return rc;
}

char *privdirs_mkdtemp(char *tmpl)
{
    if (!mkdtemp(tmpl))
        return NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; share_locked() == 0 && i < PRIVDIRS_MAX; i++) {
        if (__atomic_load_n(&slots[i].used, __ATOMIC_ACQUIRE) ||
            strlen(tmpl) >= sizeof slots[i].path)
            continue;
        strcpy(slots[i].path, tmpl);
        __atomic_store_n(&slots[i].used, 1, __ATOMIC_RELEASE);
        break;
    }
    pthread_mutex_unlock(&lock);
    return tmpl;
}

void privdirs_forget(const char *dir)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; slots && dir && i < PRIVDIRS_MAX; i++)
        if (__atomic_load_n(&slots[i].used, __ATOMIC_ACQUIRE) &&
            strcmp(slots[i].path, dir) == 0)
            __atomic_store_n(&slots[i].used, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
}

/* No lock: the guard, forked while another thread may have held it,
 * runs this alone once dlrun is gone. */
void privdirs_remove_all(void)
{
    for (int i = 0; slots && i < PRIVDIRS_MAX; i++) {
        if (!__atomic_load_n(&slots[i].used, __ATOMIC_ACQUIRE))
            continue;
        safefile_remove_dir(slots[i].path);
        __atomic_store_n(&slots[i].used, 0, __ATOMIC_RELEASE);
    }
}
