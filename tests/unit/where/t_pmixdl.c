/* t_pmixdl.c - libpmix opened on first use: the handle is the same each
 * time, the server's table is filled entry by entry, and a call through
 * it answers as PMIx does.  Without PMIx compiled in there is nothing to
 * open (the module is empty). */
#include <stdio.h>
#include <string.h>

#include "tap.h"

#ifdef HAVE_PMIX
#include <dlfcn.h>

#include "where/pmixdl.h"

int main(void)
{
    struct err err = { "" };
    void *const *fn = (void *const *)&pmixdl;
    size_t nfn = sizeof pmixdl / sizeof(void *);
    void *h = pmixdl_handle(&err);
    int missing = 0;
    const char *s;

    ok(h != NULL, "pmixdl_handle");
    if (!h)
        printf("# %s\n", err.msg);
    ok(pmixdl_handle(&err) == h, "opened once: the same handle");
    ok(h && dlsym(h, "PMIx_Init") != NULL, "the handle is libpmix's");
    ok(pmixdl.server_init == NULL, "the table is empty before pmixdl_server");
    is_int(pmixdl_server(&err), 0, "pmixdl_server");
    for (size_t i = 0; i < nfn; i++)
        missing += fn[i] == NULL;
    is_int(missing, 0, "every entry of the table filled");
    is_int(pmixdl_server(&err), 0, "a second call: 0");
    s = pmixdl.Error_string ? pmixdl.Error_string(PMIX_ERR_NOT_FOUND) : NULL;
    ok(s && strstr(s, "NOT-FOUND"), "PMIx_Error_string through the table");
    printf("# %s\n", s ? s : "(null)");
    return tap_done();
}
#else
int main(void)
{
    return tap_skip_all("PMIx is not compiled in");
}
#endif
