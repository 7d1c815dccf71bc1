/* http_req.c - see http_req.h. */
#include "rendezvous/http_req.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { ST_HEAD, ST_BODY, ST_DONE, ST_FAILED };

int http_req_init(struct http_req *p, size_t max_head, size_t max_body,
                  http_req_cb cb, void *ctx, struct err *err)
{
    memset(p, 0, sizeof *p);
    p->max_head = max_head < 16 ? 16 : max_head;
    p->max_body = max_body;
    p->cb = cb;
    p->ctx = ctx;
    p->head = malloc(p->max_head + 1);
    return p->head ? 0 : err_set(err, "out of memory");
}

void http_req_free(struct http_req *p)
{
    free(p->head);
    free(p->body);
    p->head = NULL;
    p->body = NULL;
}

int http_req_status(const struct http_req *p)
{
    return p->status;
}

int http_req_pending(const struct http_req *p)
{
    return (p->state == ST_HEAD && p->head_len > 0) || p->state == ST_BODY;
}

const char *http_reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    case 507: return "Insufficient Storage";
    default: return "Error";
    }
}

static int fail(struct http_req *p, int status, struct err *err,
                const char *what)
{
    p->state = ST_FAILED;
    p->status = status;
    return err_set(err, "bad HTTP request: %s (answered %d %s)", what, status,
                   http_reason(status));
}

/* RFC 9110's token characters (methods and header names). */
static int is_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* "METHOD /target HTTP/1.x" in place (line is NUL-terminated, no CR). */
static int parse_request_line(struct http_req *p, char *line, struct err *err)
{
    char *sp1 = strchr(line, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;

    if (!sp1 || !sp2 || sp1 == line || sp1 - line > 16 || strchr(sp2 + 1, ' '))
        return fail(p, 400, err, "the request line is not METHOD TARGET VERSION");
    *sp1 = *sp2 = '\0';
    for (char *c = line; *c; c++)
        if (!is_tchar((unsigned char)*c))
            return fail(p, 400, err, "the method has a character not allowed");
    if (sp1[1] != '/')
        return fail(p, 400, err, "the target does not start with '/'");
    for (unsigned char *c = (unsigned char *)sp1 + 1; *c; c++)
        if (*c <= 0x20 || *c >= 0x7f)
            return fail(p, 400, err, "the target has a character not allowed");
    if (strncmp(sp2 + 1, "HTTP/", 5) != 0)
        return fail(p, 400, err, "the version is not HTTP/1.0 or HTTP/1.1");
    if (strcmp(sp2 + 1, "HTTP/1.0") && strcmp(sp2 + 1, "HTTP/1.1"))
        return fail(p, 505, err, "only HTTP/1.0 and HTTP/1.1 are served");
    p->req.method = line;
    p->req.target = sp1 + 1;
    p->req.minor = sp2[8] - '0';
    return 0;
}

/* Content-Length: digits only, at most max_body; a repeat must agree. */
static int header_length(struct http_req *p, const char *v, struct err *err)
{
    size_t n = 0;

    if (!*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 18)
        return fail(p, 400, err, "Content-Length is not a number");
    for (; *v; v++)
        n = n * 10 + (size_t)(*v - '0');
    if (p->req.has_length && n != p->body_len)
        return fail(p, 400, err, "two different Content-Length headers");
    if (n > p->max_body)
        return fail(p, 413, err, "the body is larger than this server takes");
    p->req.has_length = 1;
    p->body_len = n;
    return 0;
}

/* One "Name: value" line (NUL-terminated, no CR).  *keep: 1 keep-alive,
 * -1 close, 0 not said. */
static int parse_header(struct http_req *p, char *line, int *keep,
                        struct err *err)
{
    char *colon = strchr(line, ':'), *v, *end;

    if (line[0] == ' ' || line[0] == '\t')
        return fail(p, 400, err, "folded header lines are not accepted");
    if (!colon || colon == line)
        return fail(p, 400, err, "a header line has no 'Name:'");
    for (char *c = line; c < colon; c++)
        if (!is_tchar((unsigned char)*c))
            return fail(p, 400, err, "a header name has a character not allowed");
    *colon = '\0';
    for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
        ;
    for (end = v + strlen(v); end > v && (end[-1] == ' ' || end[-1] == '\t');)
        *--end = '\0';
    for (unsigned char *c = (unsigned char *)v; *c; c++)
        if ((*c < 0x20 && *c != '\t') || *c == 0x7f)
            return fail(p, 400, err, "a header value has a control character");
    if (strcasecmp(line, "Content-Length") == 0)
        return header_length(p, v, err);
    if (strcasecmp(line, "Transfer-Encoding") == 0)
        return fail(p, 501, err, "Transfer-Encoding is not supported: send "
                    "Content-Length");
    if (strcasecmp(line, "Connection") == 0)
        *keep = strcasestr(v, "close") ? -1 :
                strcasestr(v, "keep-alive") ? 1 : *keep;
    return 0;
}

/* The whole head is in p->head (ends with an empty line): split and check. */
static int parse_head(struct http_req *p, struct err *err)
{
    char *line = p->head, *save = NULL;
    int keep = 0, first = 1;

    p->head[p->head_len] = '\0';
    if (memchr(p->head, '\0', p->head_len))
        return fail(p, 400, err, "the head has a NUL byte");
    for (char *l = strtok_r(line, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        size_t n = strlen(l);
        if (n && l[n - 1] == '\r')
            l[--n] = '\0';
        if (n == 0)
            break;
        if (strchr(l, '\r'))
            return fail(p, 400, err, "a bare CR in the head");
        if (first ? parse_request_line(p, l, err) : parse_header(p, l, &keep, err))
            return -1;
        first = 0;
    }
    if (first)
        return fail(p, 400, err, "no request line");
    p->req.close = p->req.minor == 0 ? keep <= 0 : keep < 0;
    return 0;
}

/* The request is complete: call back, then get ready for the next one. */
static int deliver(struct http_req *p)
{
    int stop;

    p->req.body = p->body_len ? p->body : NULL;
    p->req.body_len = p->body_len;
    stop = p->cb(p->ctx, &p->req);
    free(p->body);
    p->body = NULL;
    p->body_len = p->body_got = p->head_len = p->scan = 0;
    memset(&p->req, 0, sizeof p->req);
    p->state = stop ? ST_DONE : ST_HEAD;
    return stop ? 1 : 0;
}

/* Has the head ended (an empty line) at p->head_len? */
static int head_ended(const struct http_req *p)
{
    const char *h = p->head;
    size_t n = p->head_len;

    return (n >= 2 && h[n - 1] == '\n' && h[n - 2] == '\n') ||
           (n >= 3 && h[n - 1] == '\n' && h[n - 2] == '\r' && h[n - 3] == '\n');
}

/* Take head bytes from *d; 1 when the head is complete, 0 when more is
 * needed, -1 on error. */
static int take_head(struct http_req *p, const uint8_t **d, size_t *len,
                     struct err *err)
{
    while (*len > 0) {
        uint8_t c = **d;
        (*d)++, (*len)--;
        /* empty lines before a request are allowed (RFC 9112 2.2) */
        if (p->head_len == 0 && (c == '\r' || c == '\n'))
            continue;
        if (p->head_len == p->max_head)
            return fail(p, 431, err, "the request line and headers are too long");
        p->head[p->head_len++] = (char)c;
        if (c == '\n' && head_ended(p))
            return 1;
    }
    return 0;
}

static int start_body(struct http_req *p, struct err *err)
{
    if (p->body_len == 0)
        return 0;
    p->body = malloc(p->body_len);
    if (!p->body)
        return fail(p, 500, err, "out of memory for the body");
    p->state = ST_BODY;
    return 0;
}

int http_req_feed(struct http_req *p, const void *data, size_t len,
                  struct err *err)
{
    const uint8_t *d = data;

    if (p->state == ST_FAILED)
        return err_set(err, "bad HTTP request (answered %d)", p->status);
    while (len > 0 && p->state != ST_DONE) {
        if (p->state == ST_HEAD) {
            int r = take_head(p, &d, &len, err);
            if (r <= 0)
                return r;
            if (parse_head(p, err) < 0 || start_body(p, err) < 0)
                return -1;
            if (p->state == ST_HEAD && deliver(p))
                return 1;
            continue;
        }
        size_t take = p->body_len - p->body_got < len ? p->body_len - p->body_got
                                                      : len;
        memcpy(p->body + p->body_got, d, take);
        p->body_got += take;
        d += take;
        len -= take;
        if (p->body_got == p->body_len && deliver(p))
            return 1;
    }
    return p->state == ST_DONE ? 1 : 0;
}
