/* t_sshdl.c - libssh opened with dlopen: every entry of the table is
 * filled, a second open is free, and the functions work (a session made
 * and freed through them). */
#include <stddef.h>

#include "run/sshdl.h"
#include "tap.h"

int main(void)
{
    struct err err = { "" };
    void *const *fn = (void *const *)&sshdl;
    size_t nfn = sizeof sshdl / sizeof(void *);
    int missing = 0;
    ssh_session s;

    ok(sshdl.new == NULL, "nothing loaded before sshdl_open");
    is_int(sshdl_open(&err), 0, "sshdl_open");
    if (err.msg[0])
        printf("# %s\n", err.msg);
    for (size_t i = 0; i < nfn; i++)
        missing += fn[i] == NULL;
    is_int(missing, 0, "every function of the table found");
    is_int(sshdl_open(&err), 0, "opened once: a second call is 0");
    s = sshdl.new ? sshdl.new() : NULL;
    ok(s != NULL, "ssh_new through the table");
    ok(s && sshdl.options_set(s, SSH_OPTIONS_HOST, "localhost") == 0,
       "ssh_options_set through the table");
    if (s)
        sshdl.free(s);
    return tap_done();
}
