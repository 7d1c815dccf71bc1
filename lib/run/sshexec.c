/* sshexec.c - one remote command over libssh (see sshexec.h). */
#include "run/sshexec.h"

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/sshdl.h"
#include "util/clock.h"
#include "util/say.h"

/* libssh is opened with dlopen (sshdl.h): its functions through the table */
#define ssh_channel_close sshdl.channel_close
#define ssh_channel_free sshdl.channel_free
#define ssh_channel_get_exit_status sshdl.channel_get_exit_status
#define ssh_channel_is_closed sshdl.channel_is_closed
#define ssh_channel_is_eof sshdl.channel_is_eof
#define ssh_channel_is_open sshdl.channel_is_open
#define ssh_channel_new sshdl.channel_new
#define ssh_channel_open_session sshdl.channel_open_session
#define ssh_channel_poll sshdl.channel_poll
#define ssh_channel_read_nonblocking sshdl.channel_read_nonblocking
#define ssh_channel_request_exec sshdl.channel_request_exec
#define ssh_channel_send_eof sshdl.channel_send_eof
#define ssh_channel_write sshdl.channel_write
#define ssh_clean_pubkey_hash sshdl.clean_pubkey_hash
#define ssh_connect sshdl.connect
#define ssh_disconnect sshdl.disconnect
#define ssh_free sshdl.free
#define ssh_get_error sshdl.get_error
#define ssh_get_fd sshdl.get_fd
#define ssh_get_fingerprint_hash sshdl.get_fingerprint_hash
#define ssh_get_log_level sshdl.get_log_level
#define ssh_get_publickey_hash sshdl.get_publickey_hash
#define ssh_get_server_publickey sshdl.get_server_publickey
#define ssh_key_free sshdl.key_free
#define ssh_new sshdl.new
#define ssh_options_get sshdl.options_get
#define ssh_options_get_port sshdl.options_get_port
#define ssh_options_parse_config sshdl.options_parse_config
#define ssh_options_set sshdl.options_set
#define ssh_session_is_known_server sshdl.session_is_known_server
#define ssh_set_channel_callbacks sshdl.set_channel_callbacks
#define ssh_set_log_callback sshdl.set_log_callback
#define ssh_set_log_level sshdl.set_log_level
#define ssh_string_free_char sshdl.string_free_char
#define ssh_userauth_none sshdl.userauth_none
#define ssh_userauth_publickey_auto sshdl.userauth_publickey_auto

struct sshexec {
    ssh_session s;
    ssh_channel ch;
    struct ssh_channel_callbacks_struct cb;
    int exit_signal;            /* from the exit-signal message, 0 none */
    char host[256];
};

/* The server says the command died of a signal: keep its number. */
static void on_exit_signal(ssh_session s, ssh_channel ch, const char *name,
                           int core, const char *msg, const char *lang,
                           void *user)
{
    struct sshexec *x = user;

    (void)s, (void)ch, (void)core, (void)msg, (void)lang;
    for (int sig = 1; sig < NSIG && name; sig++) {
        const char *abbrev = sigabbrev_np(sig);
        if (abbrev && strcmp(abbrev, name) == 0) {
            x->exit_signal = sig;
            return;
        }
    }
    x->exit_signal = SIGKILL;   /* a name we do not know: still a death */
}

/* libssh's log, which it would write raw on stderr, timestamped, at the
 * level ssh_config's LogLevel gives (LogLevel ERROR: its warnings): this
 * thread's session's host and the level shown (log_begin). */
static _Thread_local char log_host[256];
static _Thread_local int log_shown;

/* Each message as one whole line through say(), or dropped. */
static void on_log(int priority, const char *function, const char *buffer,
                   void *userdata)
{
    char line[512];

    (void)function, (void)userdata;
    if (priority > log_shown || !buffer)
        return;
    snprintf(line, sizeof line, "%s", buffer);
    for (char *p = line; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    say("ssh %s: libssh: %s", log_host, line);
}

/* Before the config is read: what is shown is what -v asks for, until
 * log_config sees the config's LogLevel. */
static void log_begin(const char *host, int verbose)
{
    static int installed;

    if (!installed) {       /* process-wide in libssh: once */
        ssh_set_log_callback(on_log);
        installed = 1;
    }
    snprintf(log_host, sizeof log_host, "%s", host);
    log_shown = verbose ? SSH_LOG_WARNING : SSH_LOG_NOLOG;
    ssh_set_log_level(log_shown);
}

/* After the config: LogLevel VERBOSE or DEBUG asks for libssh's steps and
 * gets them; QUIET, FATAL, ERROR and INFO add nothing (dlrun says the
 * errors itself).  The session's level set to what is shown. */
static int log_config(ssh_session s)
{
    int level = ssh_get_log_level();

    if (level >= SSH_LOG_PROTOCOL && level > log_shown)
        log_shown = level;
    return ssh_options_set(s, SSH_OPTIONS_LOG_VERBOSITY, &log_shown);
}

/* ~/.ssh/config first, so that what the user gave on the command line
 * wins over it (libssh applies the config file over earlier options). */
static int set_options(struct sshexec *x, const struct sshexec_opts *o)
{
    long timeout = o->timeout_s > 0 ? o->timeout_s : 10;
    int rc = 0;

    log_begin(x->host, o->verbose);
    rc |= ssh_options_set(x->s, SSH_OPTIONS_HOST, o->host);
    rc |= ssh_options_parse_config(x->s, o->config);
    rc |= log_config(x->s);
    if (o->user)
        rc |= ssh_options_set(x->s, SSH_OPTIONS_USER, o->user);
    if (o->port > 0)
        rc |= ssh_options_set(x->s, SSH_OPTIONS_PORT, &o->port);
    if (o->identity)
        rc |= ssh_options_set(x->s, SSH_OPTIONS_ADD_IDENTITY, o->identity);
    if (o->known_hosts)
        rc |= ssh_options_set(x->s, SSH_OPTIONS_KNOWNHOSTS, o->known_hosts);
    rc |= ssh_options_set(x->s, SSH_OPTIONS_TIMEOUT, &timeout);
    return rc == 0 ? 0 : -1;
}

/* "SHA256:..." of the server's key into buf ("?" when unavailable). */
static void server_fingerprint(ssh_session s, char *buf, size_t len)
{
    ssh_key key = NULL;
    unsigned char *hash = NULL;
    size_t hlen = 0;
    char *fp = NULL;

    snprintf(buf, len, "?");
    if (ssh_get_server_publickey(s, &key) == SSH_OK &&
        ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash,
                               &hlen) == 0 &&
        (fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen)))
        snprintf(buf, len, "%s", fp);
    ssh_string_free_char(fp);
    ssh_clean_pubkey_hash(&hash);
    ssh_key_free(key);
}

static int check_host_key(struct sshexec *x, const struct sshexec_opts *o,
                          struct err *err)
{
    const char *file = o->known_hosts ? o->known_hosts : "~/.ssh/known_hosts";
    char fp[128], p[16] = "", name[300];

    /* on a port other than 22, known_hosts names the host [HOST]:PORT */
    snprintf(name, sizeof name, "%s", o->host);
    if (o->port > 0 && o->port != 22) {
        snprintf(p, sizeof p, "-p %d ", o->port);
        snprintf(name, sizeof name, "'[%s]:%d'", o->host, o->port);
    }
    switch (ssh_session_is_known_server(x->s)) {
    case SSH_KNOWN_HOSTS_OK:
        return 0;
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER:
        server_fingerprint(x->s, fp, sizeof fp);
        return err_set(err, "ssh %s: the host key CHANGED (now %s) against "
                       "%s: refusing to connect; if the change is expected, "
                       "remove the old key (ssh-keygen -R %s) and add the "
                       "new one", o->host, fp, file, name);
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND:
        server_fingerprint(x->s, fp, sizeof fp);
        return err_set(err, "ssh %s: host key %s is not in %s: refusing to "
                       "connect; check the fingerprint, then add it (ssh %s%s "
                       "once, or ssh-keyscan %s%s >> %s)", o->host, fp, file,
                       p, o->host, p, o->host, file);
    default:
        return err_set(err, "ssh %s: cannot check the host key against %s: "
                       "%s", o->host, file, ssh_get_error(x->s));
    }
}

static int authenticate(struct sshexec *x, const struct sshexec_opts *o,
                        struct err *err)
{
    char *user = NULL;

    ssh_userauth_none(x->s, NULL);
    if (ssh_userauth_publickey_auto(x->s, NULL, NULL) == SSH_AUTH_SUCCESS)
        return 0;
    ssh_options_get(x->s, SSH_OPTIONS_USER, &user);
    err_set(err, "ssh %s: no key was accepted for user %s (tried ssh-agent, "
            "%s~/.ssh/id_*; dlrun never asks for a password): add your public "
            "key to the host's authorized_keys or pass --ssh-identity",
            o->host, user ? user : "?", o->identity ? "--ssh-identity, " : "");
    ssh_string_free_char(user);
    return -1;
}

static int open_exec(struct sshexec *x, const char *command, struct err *err)
{
    x->ch = ssh_channel_new(x->s);
    if (!x->ch || ssh_channel_open_session(x->ch) != SSH_OK)
        return err_set(err, "ssh %s: cannot open a session: %s", x->host,
                       ssh_get_error(x->s));
    x->cb.userdata = x;
    x->cb.channel_exit_signal_function = on_exit_signal;
    ssh_callbacks_init(&x->cb);
    ssh_set_channel_callbacks(x->ch, &x->cb);
    if (ssh_channel_request_exec(x->ch, command) != SSH_OK)
        return err_set(err, "ssh %s: cannot start the command: %s", x->host,
                       ssh_get_error(x->s));
    return 0;
}

int sshexec_host_name(const struct sshexec_opts *o, char *out, size_t len,
                      struct err *err)
{
    ssh_session s = NULL;
    char *host = NULL;
    int rc = -1;

    if (sshdl_open(err) < 0) {
        err_prefix(err, "ssh %s", o->host);
        goto out;
    }
    if (!(s = ssh_new())) {
        err_set(err, "ssh %s: out of memory", o->host);
        goto out;
    }
    log_begin(o->host, o->verbose);
    if (ssh_options_set(s, SSH_OPTIONS_HOST, o->host) < 0 ||
        ssh_options_parse_config(s, o->config) < 0 || log_config(s) < 0 ||
        ssh_options_get(s, SSH_OPTIONS_HOST, &host) != SSH_OK || !host) {
        err_set(err, "ssh %s: cannot read the ssh configuration: %s", o->host,
                ssh_get_error(s));
        goto out;
    }
    if (strlen(host) >= len) {
        err_set(err, "ssh %s: HostName %.60s... is too long", o->host, host);
        goto out;
    }
    memcpy(out, host, strlen(host) + 1);
    rc = 0;
out:
    if (host)       /* the table is empty when libssh did not load */
        ssh_string_free_char(host);
    if (s)
        ssh_free(s);
    return rc;
}

/* The first address name resolves to, numeric, into buf ("" when it
 * does not resolve). */
static void first_addr(const char *name, char *buf, size_t len)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;

    buf[0] = '\0';
    if (getaddrinfo(name, NULL, &hints, &ai) == 0 && ai)
        getnameinfo(ai->ai_addr, ai->ai_addrlen, buf, (socklen_t)len, NULL,
                    0, NI_NUMERICHOST);
    if (ai)
        freeaddrinfo(ai);
}

/* ssh_connect failed after ms: name the host, the address and port
 * tried, and how long it took.  libssh's "Socket error: disconnected" is
 * a TCP connection closed before the SSH greeting came. */
static void connect_failed(struct sshexec *x, const struct sshexec_opts *o,
                           long ms, struct err *err)
{
    char *name = NULL, addr[NI_MAXHOST];
    const char *why = ssh_get_error(x->s), *host;
    unsigned int port = 22;

    ssh_options_get(x->s, SSH_OPTIONS_HOST, &name);
    ssh_options_get_port(x->s, &port);
    host = name ? name : o->host;
    first_addr(host, addr, sizeof addr);
    if (strstr(why, "Socket error: disconnected"))
        why = "the connection was closed before the SSH greeting (no sshd "
              "answers there, or a firewall or proxy in between)";
    err_set(err, "ssh %s: cannot connect to %s%s%s port %u (after %.1f s; "
            "--connect-timeout %d): %s", o->host, host,
            addr[0] && strcmp(addr, host) ? " at " : "",
            addr[0] && strcmp(addr, host) ? addr : "", port, ms / 1000.0,
            o->timeout_s > 0 ? o->timeout_s : 10, why);
    ssh_string_free_char(name);
}

struct sshexec *sshexec_start(const struct sshexec_opts *o,
                              const char *command, struct err *err)
{
    struct sshexec *x = calloc(1, sizeof *x);
    long t0;

    if (sshdl_open(err) < 0) {
        err_prefix(err, "ssh %s", o->host);
        free(x);
        return NULL;
    }
    if (!x || !(x->s = ssh_new())) {
        err_set(err, "ssh %s: out of memory", o->host);
        goto fail;
    }
    snprintf(x->host, sizeof x->host, "%s", o->host);
    if (set_options(x, o) < 0) {
        err_set(err, "ssh %s: bad option: %s", o->host, ssh_get_error(x->s));
        goto fail;
    }
    t0 = clock_ms();
    if (ssh_connect(x->s) != SSH_OK) {
        connect_failed(x, o, clock_ms() - t0, err);
        goto fail;
    }
    if (check_host_key(x, o, err) < 0 || authenticate(x, o, err) < 0 ||
        open_exec(x, command, err) < 0)
        goto fail;
    return x;
fail:
    sshexec_close(x);
    return NULL;
}

int sshexec_fd(const struct sshexec *x)
{
    return ssh_get_fd(x->s);
}

int sshexec_write(struct sshexec *x, const void *buf, size_t len,
                  struct err *err)
{
    const char *p = buf;

    while (len > 0) {
        int n = ssh_channel_write(x->ch, p, (uint32_t)len);
        if (n <= 0)
            return err_set(err, "ssh %s: cannot write: %s", x->host,
                           ssh_get_error(x->s));
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int sshexec_send_eof(struct sshexec *x, struct err *err)
{
    if (ssh_channel_is_open(x->ch) && ssh_channel_send_eof(x->ch) != SSH_OK)
        return err_set(err, "ssh %s: cannot close stdin: %s", x->host,
                       ssh_get_error(x->s));
    return 0;
}

int sshexec_read(struct sshexec *x, int stream, void *buf, size_t len,
                 struct err *err)
{
    int n = ssh_channel_read_nonblocking(x->ch, buf, (uint32_t)len,
                                         stream == 2);

    if (n == SSH_ERROR)
        return err_set(err, "ssh %s: the connection failed: %s", x->host,
                       ssh_get_error(x->s));
    return n == SSH_EOF ? 0 : n;
}

int sshexec_done(struct sshexec *x)
{
    return !ssh_channel_is_open(x->ch) || ssh_channel_is_closed(x->ch) ||
           (ssh_channel_is_eof(x->ch) &&
            ssh_channel_poll(x->ch, 0) <= 0 && ssh_channel_poll(x->ch, 1) <= 0 &&
            ssh_channel_get_exit_status(x->ch) != -1);
}

int sshexec_exit_code(const struct sshexec *x)
{
    if (x->exit_signal)
        return 128 + x->exit_signal;
    return ssh_channel_get_exit_status(x->ch);
}

void sshexec_close(struct sshexec *x)
{
    if (!x)
        return;
    if (x->ch) {
        ssh_channel_close(x->ch);
        ssh_channel_free(x->ch);
    }
    if (x->s) {
        ssh_disconnect(x->s);
        ssh_free(x->s);
    }
    free(x);
}
