/* pmixdl.c - see pmixdl.h. */
#ifdef HAVE_PMIX
#include "where/pmixdl.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#ifndef PMIX_LIBDIR
#define PMIX_LIBDIR ""
#endif
#define PMIX_SONAME "libpmix.so.2"     /* the ABI of the PMIx 4 headers */

struct pmixdl pmixdl;

void *pmixdl_handle(struct err *err)
{
    static void *dl;
    const char *where = PMIX_LIBDIR[0] ? PMIX_LIBDIR "/" PMIX_SONAME
                                       : PMIX_SONAME;

    if (!dl)
        dl = dlopen(where, RTLD_NOW | RTLD_GLOBAL);
    if (!dl)
        dl = dlopen(PMIX_SONAME, RTLD_NOW | RTLD_GLOBAL);
    if (!dl)
        err_set(err, "cannot load the PMIx library %s: %s (install libpmix2)",
                PMIX_SONAME, dlerror());
    return dl;
}

/* dlsym into *slot (a function pointer of the right type); 0 / -1. */
static int sym(void *dl, void *slot, const char *name)
{
    void *f = dlsym(dl, name);

    memcpy(slot, &f, sizeof f);
    return f ? 0 : -1;
}

int pmixdl_server(struct err *err)
{
    static const struct { size_t off; const char *name; } fns[] = {
        { offsetof(struct pmixdl, Error_string), "PMIx_Error_string" },
        { offsetof(struct pmixdl, Info_load), "PMIx_Info_load" },
        { offsetof(struct pmixdl, Value_destruct), "PMIx_Value_destruct" },
        { offsetof(struct pmixdl, generate_regex), "PMIx_generate_regex" },
        { offsetof(struct pmixdl, generate_ppn), "PMIx_generate_ppn" },
        { offsetof(struct pmixdl, server_init), "PMIx_server_init" },
        { offsetof(struct pmixdl, server_finalize), "PMIx_server_finalize" },
        { offsetof(struct pmixdl, server_register_nspace),
          "PMIx_server_register_nspace" },
        { offsetof(struct pmixdl, server_deregister_nspace),
          "PMIx_server_deregister_nspace" },
        { offsetof(struct pmixdl, server_register_client),
          "PMIx_server_register_client" },
        { offsetof(struct pmixdl, server_setup_fork),
          "PMIx_server_setup_fork" },
        { offsetof(struct pmixdl, server_dmodex_request),
          "PMIx_server_dmodex_request" },
    };
    void *dl = pmixdl_handle(err);

    if (!dl)
        return -1;
    if (pmixdl.server_dmodex_request)
        return 0;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (sym(dl, (char *)&pmixdl + fns[i].off, fns[i].name) < 0)
            return err_set(err, "the PMIx library lacks %s (PMIx 4 needed)",
                           fns[i].name);
    return 0;
}
#endif
