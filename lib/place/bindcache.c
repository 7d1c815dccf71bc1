/* bindcache.c - see bindcache.h. */
#include "place/bindcache.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "place/hwlocdl.h"
#include "place/topo.h"
#include "place/topocache.h"

#define BINDCACHE_FORMAT 2          /* bump when what is saved changes */
#define BINDCACHE_MAGIC "dlrunBND"  /* 8 bytes, no NUL in the file */

/* The file: this header, then nlocal struct bind_rank as bind_node made
 * them (plain data: a cpu_set_t, char arrays, ints).  The entry size and
 * the key are in the header so that a file of another build or of a
 * colliding name is never taken for this one.  lib is the libhwloc file
 * that read the topology: the key cannot say which library a launch
 * would load without loading it (what a hit spares), so a hit checks
 * with one stat that the file is still there unchanged (not upgraded). */
struct header {
    char magic[8];
    uint32_t format;        /* BINDCACHE_FORMAT */
    uint32_t entry_size;    /* sizeof(struct bind_rank) */
    uint32_t nlocal;
    uint32_t zero;          /* the padding made explicit */
    uint64_t key;
    struct hwlocdl_file lib;
};

_Static_assert(sizeof(struct header) == 32 + sizeof(struct hwlocdl_file) &&
               sizeof(struct hwlocdl_file) == 5 * 8 + 256,
               "struct header has no holes");
/* bind_node reads every field of its options: the key hashes them one by
 * one (not the struct, whose padding is not an input), so a new field must
 * join bind_key before this assertion is changed */
_Static_assert(sizeof(struct bind_opts) == 7 * sizeof(int),
               "a new field of struct bind_opts must join bind_key");

/* Everything bind_node's result depends on besides the topology, hashed
 * on top of the topology's own state. */
static uint64_t bind_key(uint64_t state, int nlocal, const struct bind_opts *o,
                         const char *granted)
{
    const int fields[] = {
        BINDCACHE_FORMAT, (int)sizeof(struct bind_rank), nlocal,
        (int)o->map, (int)o->ppr_obj, o->ppr, o->pe, (int)o->bind,
        (int)o->gpu, o->oversubscribe,
    };
    /* NULL (every GPU) and "" (none) are different inputs */
    unsigned char given = granted != NULL;
    /* where the loader looks for libhwloc first: another one there would
     * read the topology, while the file in the header is still there */
    const char *ld_path = getenv("LD_LIBRARY_PATH");
    uint64_t h = topocache_hash(state, fields, sizeof fields);

    h = topocache_hash(h, &given, 1);
    if (granted)
        h = topocache_hash(h, granted, strlen(granted) + 1);
    if (ld_path)
        h = topocache_hash(h, ld_path, strlen(ld_path) + 1);
    return h;
}

int bindcache_key(struct bindcache *c, int nlocal, const struct bind_opts *o,
                  const char *granted)
{
    struct cache_where w;

    if (nlocal < 1 || topocache_where(topo_want_pci(), &w) < 0)
        return -1;
    c->nlocal = nlocal;
    c->key = bind_key(w.state, nlocal, o, granted);
    return topocache_file(&w, "bind", c->key, "bin", c->path, sizeof c->path);
}

static size_t file_size(int nlocal)
{
    return sizeof(struct header) + (size_t)nlocal * sizeof(struct bind_rank);
}

static int header_ok(const void *buf, const struct bindcache *c)
{
    struct header h;

    memcpy(&h, buf, sizeof h);
    return memcmp(h.magic, BINDCACHE_MAGIC, sizeof h.magic) == 0 &&
           h.format == BINDCACHE_FORMAT &&
           h.entry_size == sizeof(struct bind_rank) &&
           h.nlocal == (uint32_t)c->nlocal && h.zero == 0 && h.key == c->key &&
           hwlocdl_file_unchanged(&h.lib);
}

/* What bind_node always makes: strings ended within their arrays, GPU
 * indices of -1 or more and set together, a CPU list exactly when there
 * is a mask, and a mask inside the CPUs this process may use (the plan is
 * made on a topology restricted to them). */
static int entry_ok(const struct bind_rank *r, const cpu_set_t *allowed)
{
    cpu_set_t both;

    if (!memchr(r->cpus, '\0', sizeof r->cpus) ||
        !memchr(r->gpu_busid, '\0', sizeof r->gpu_busid) ||
        !memchr(r->visible, '\0', sizeof r->visible) ||
        !memchr(r->gpu_list, '\0', sizeof r->gpu_list))
        return 0;
    if (r->ngpus < 0 || r->ngpus > 4096 || (r->ngpus > 0) != (r->gpu >= 0))
        return 0;
    if (r->gpu < -1 || r->gpu_pci < -1 || (r->gpu < 0) != (r->gpu_pci < 0) ||
        (r->gpu_busid[0] == '\0') != (r->gpu_pci < 0))
        return 0;
    if ((r->cpus[0] == '\0') != (CPU_COUNT(&r->mask) == 0))
        return 0;
    CPU_OR(&both, &r->mask, allowed);
    return CPU_EQUAL(&both, allowed);
}

int bindcache_load(const struct bindcache *c, struct bind_rank *out)
{
    size_t len = 0;
    char *buf = topocache_read(c->path, &len);
    cpu_set_t allowed;
    int rc = -1;

    if (!buf || len != file_size(c->nlocal) || !header_ok(buf, c) ||
        sched_getaffinity(0, sizeof allowed, &allowed) < 0)
        goto out;
    memcpy(out, buf + sizeof(struct header), len - sizeof(struct header));
    for (int k = 0; k < c->nlocal; k++)
        if (!entry_ok(&out[k], &allowed))
            goto out;
    rc = 0;
out:
    /* no file, or one that is not right (a link, another user's, another
     * size or key): gone, and rewritten after planning */
    if (rc < 0)
        unlink(c->path);
    free(buf);
    return rc;
}

void bindcache_save(const struct bindcache *c, const struct bind_rank *r)
{
    struct header h = { .format = BINDCACHE_FORMAT,
                        .entry_size = sizeof(struct bind_rank),
                        .nlocal = (uint32_t)c->nlocal, .key = c->key };
    size_t len = file_size(c->nlocal);
    char *buf;

    /* hwloc made r, so it is loaded: this only asks which file it is */
    if (hwlocdl_file(&h.lib) < 0)
        return;
    buf = malloc(len);
    if (!buf)
        return;
    memcpy(h.magic, BINDCACHE_MAGIC, sizeof h.magic);
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, r, len - sizeof h);
    topocache_write(c->path, buf, len);
    free(buf);
}
