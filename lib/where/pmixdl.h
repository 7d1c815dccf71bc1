/* pmixdl.h - libpmix opened with dlopen on first use, not linked: loading
 * it (and its own libraries) cost about a millisecond at every dlrun
 * start, and most starts never use it.  lib/where/pmixc.c (the client) takes the
 * handle; the hosted server (lib/mpi/pmix_host*) calls through the table. */
#ifndef DLRUN_PMIXDL_H
#define DLRUN_PMIXDL_H

#include <pmix.h>
#include <pmix_server.h>

#include "util/err.h"

/* The library's functions the hosted server uses, once pmixdl_server()
 * returned 0. */
struct pmixdl {
    __typeof__(&PMIx_Error_string) Error_string;
    __typeof__(&PMIx_Info_load) Info_load;
    __typeof__(&PMIx_Value_destruct) Value_destruct;
    __typeof__(&PMIx_generate_regex) generate_regex;
    __typeof__(&PMIx_generate_ppn) generate_ppn;
    __typeof__(&PMIx_server_init) server_init;
    __typeof__(&PMIx_server_finalize) server_finalize;
    __typeof__(&PMIx_server_register_nspace) server_register_nspace;
    __typeof__(&PMIx_server_deregister_nspace) server_deregister_nspace;
    __typeof__(&PMIx_server_register_client) server_register_client;
    __typeof__(&PMIx_server_setup_fork) server_setup_fork;
    __typeof__(&PMIx_server_dmodex_request) server_dmodex_request;
};

extern struct pmixdl pmixdl;

/* The library, opened once (where the build found it, else wherever the
 * loader looks) and kept open.  NULL with err. */
void *pmixdl_handle(struct err *err);

/* Fill pmixdl (once).  0 / -1 with err. */
int pmixdl_server(struct err *err);

#endif
