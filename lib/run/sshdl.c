/* sshdl.c - see sshdl.h. */
#include "run/sshdl.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#define SSH_SONAME "libssh.so.4"      /* the ABI of the libssh 0.10 headers */

struct sshdl sshdl;

static const struct {
    size_t off;
    const char *name;
} fns[] = {
    { offsetof(struct sshdl, channel_close), "ssh_channel_close" },
    { offsetof(struct sshdl, channel_free), "ssh_channel_free" },
    { offsetof(struct sshdl, channel_get_exit_status), "ssh_channel_get_exit_status" },
    { offsetof(struct sshdl, channel_is_closed), "ssh_channel_is_closed" },
    { offsetof(struct sshdl, channel_is_eof), "ssh_channel_is_eof" },
    { offsetof(struct sshdl, channel_is_open), "ssh_channel_is_open" },
    { offsetof(struct sshdl, channel_new), "ssh_channel_new" },
    { offsetof(struct sshdl, channel_open_session), "ssh_channel_open_session" },
    { offsetof(struct sshdl, channel_poll), "ssh_channel_poll" },
    { offsetof(struct sshdl, channel_read_nonblocking), "ssh_channel_read_nonblocking" },
    { offsetof(struct sshdl, channel_request_exec), "ssh_channel_request_exec" },
    { offsetof(struct sshdl, channel_send_eof), "ssh_channel_send_eof" },
    { offsetof(struct sshdl, channel_write), "ssh_channel_write" },
    { offsetof(struct sshdl, clean_pubkey_hash), "ssh_clean_pubkey_hash" },
    { offsetof(struct sshdl, connect), "ssh_connect" },
    { offsetof(struct sshdl, disconnect), "ssh_disconnect" },
    { offsetof(struct sshdl, free), "ssh_free" },
    { offsetof(struct sshdl, get_error), "ssh_get_error" },
    { offsetof(struct sshdl, get_fd), "ssh_get_fd" },
    { offsetof(struct sshdl, get_fingerprint_hash), "ssh_get_fingerprint_hash" },
    { offsetof(struct sshdl, get_log_level), "ssh_get_log_level" },
    { offsetof(struct sshdl, get_publickey_hash), "ssh_get_publickey_hash" },
    { offsetof(struct sshdl, get_server_publickey), "ssh_get_server_publickey" },
    { offsetof(struct sshdl, key_free), "ssh_key_free" },
    { offsetof(struct sshdl, new), "ssh_new" },
    { offsetof(struct sshdl, options_get), "ssh_options_get" },
    { offsetof(struct sshdl, options_get_port), "ssh_options_get_port" },
    { offsetof(struct sshdl, options_parse_config), "ssh_options_parse_config" },
    { offsetof(struct sshdl, options_set), "ssh_options_set" },
    { offsetof(struct sshdl, session_is_known_server), "ssh_session_is_known_server" },
    { offsetof(struct sshdl, set_channel_callbacks), "ssh_set_channel_callbacks" },
    { offsetof(struct sshdl, set_log_callback), "ssh_set_log_callback" },
    { offsetof(struct sshdl, set_log_level), "ssh_set_log_level" },
    { offsetof(struct sshdl, string_free_char), "ssh_string_free_char" },
    { offsetof(struct sshdl, userauth_none), "ssh_userauth_none" },
    { offsetof(struct sshdl, userauth_publickey_auto), "ssh_userauth_publickey_auto" },
};

int sshdl_open(struct err *err)
{
    static void *dl;

    if (dl)
        return 0;
    dl = dlopen(SSH_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!dl)
        return err_set(err, "cannot load %s: %s (install libssh-4)",
                       SSH_SONAME, dlerror());
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        void *f = dlsym(dl, fns[i].name);
        if (!f) {
            dl = NULL;
            return err_set(err, "%s lacks %s (libssh 0.10 or later needed)",
                           SSH_SONAME, fns[i].name);
        }
        memcpy((char *)&sshdl + fns[i].off, &f, sizeof f);
    }
    return 0;
}
