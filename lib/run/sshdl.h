/* sshdl.h - libssh opened with dlopen by the one process that uses it
 * (dlrun relay), not linked: with its libraries (OpenSSL, Kerberos) it
 * cost milliseconds at every dlrun start.  lib/run/sshexec.c calls through
 * the table. */
#ifndef DLRUN_SSHDL_H
#define DLRUN_SSHDL_H

#include <libssh/callbacks.h>
#include <libssh/libssh.h>

#include "util/err.h"

/* The functions lib/run/sshexec.c uses, once sshdl_open() returned 0. */
struct sshdl {
    __typeof__(&ssh_channel_close) channel_close;
    __typeof__(&ssh_channel_free) channel_free;
    __typeof__(&ssh_channel_get_exit_status) channel_get_exit_status;
    __typeof__(&ssh_channel_is_closed) channel_is_closed;
    __typeof__(&ssh_channel_is_eof) channel_is_eof;
    __typeof__(&ssh_channel_is_open) channel_is_open;
    __typeof__(&ssh_channel_new) channel_new;
    __typeof__(&ssh_channel_open_session) channel_open_session;
    __typeof__(&ssh_channel_poll) channel_poll;
    __typeof__(&ssh_channel_read_nonblocking) channel_read_nonblocking;
    __typeof__(&ssh_channel_request_exec) channel_request_exec;
    __typeof__(&ssh_channel_send_eof) channel_send_eof;
    __typeof__(&ssh_channel_write) channel_write;
    __typeof__(&ssh_clean_pubkey_hash) clean_pubkey_hash;
    __typeof__(&ssh_connect) connect;
    __typeof__(&ssh_disconnect) disconnect;
    __typeof__(&ssh_free) free;
    __typeof__(&ssh_get_error) get_error;
    __typeof__(&ssh_get_fd) get_fd;
    __typeof__(&ssh_get_fingerprint_hash) get_fingerprint_hash;
    __typeof__(&ssh_get_log_level) get_log_level;
    __typeof__(&ssh_get_publickey_hash) get_publickey_hash;
    __typeof__(&ssh_get_server_publickey) get_server_publickey;
    __typeof__(&ssh_key_free) key_free;
    __typeof__(&ssh_new) new;
    __typeof__(&ssh_options_get) options_get;
    __typeof__(&ssh_options_get_port) options_get_port;
    __typeof__(&ssh_options_parse_config) options_parse_config;
    __typeof__(&ssh_options_set) options_set;
    __typeof__(&ssh_session_is_known_server) session_is_known_server;
    __typeof__(&ssh_set_channel_callbacks) set_channel_callbacks;
    __typeof__(&ssh_set_log_callback) set_log_callback;
    __typeof__(&ssh_set_log_level) set_log_level;
    __typeof__(&ssh_string_free_char) string_free_char;
    __typeof__(&ssh_userauth_none) userauth_none;
    __typeof__(&ssh_userauth_publickey_auto) userauth_publickey_auto;
};

extern struct sshdl sshdl;

/* Open libssh (once) and fill sshdl.  0 / -1 with err. */
int sshdl_open(struct err *err);

#endif
