/* http_req.h - an HTTP/1.0 and 1.1 request parser as a protocol engine:
 * no sockets.  Feed it the bytes of one connection as they arrive, in
 * pieces of any size; it calls back once per complete request (request
 * line, headers, Content-Length body).  The server that owns the socket
 * writes the answers.
 *
 * Only what a key-value store's clients send is accepted: a body needs
 * Content-Length (no chunked transfer: 501), the head and the body have
 * limits (431, 413), and everything malformed is 400.  On an error the
 * parser stops; the caller answers with http_req_status and closes. */
#ifndef DLRUN_HTTP_REQ_H
#define DLRUN_HTTP_REQ_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* One request, all borrowed from the parser for the callback's duration. */
struct http_request {
    const char *method;     /* "GET", "PUT", ... (NUL-terminated) */
    const char *target;     /* as sent: "/scope/key" (NUL-terminated) */
    int minor;              /* HTTP/1.minor: 0 or 1 */
    int has_length;         /* a Content-Length header was sent */
    int close;              /* the client does not keep the connection
                               (HTTP/1.0 without keep-alive, or close) */
    const uint8_t *body;    /* body_len bytes (NULL when 0) */
    size_t body_len;
};

/* Return 0 to parse the next request on the connection, 1 to stop (the
 * rest of the bytes fed are ignored). */
typedef int (*http_req_cb)(void *ctx, const struct http_request *r);

struct http_req {
    size_t max_head, max_body;
    http_req_cb cb;
    void *ctx;
    int state;              /* private: head, body, done, failed */
    int status;             /* the HTTP status for the error, 0 if none */
    char *head;             /* private: the head so far (max_head + 1) */
    size_t head_len, scan;
    uint8_t *body;          /* private: the body so far */
    size_t body_len, body_got;
    struct http_request req;
};

/* Set up p (free with http_req_free).  max_head: bytes of request line
 * and headers together; max_body: largest Content-Length accepted.
 * 0 / -1 with err when out of memory. */
int http_req_init(struct http_req *p, size_t max_head, size_t max_body,
                  http_req_cb cb, void *ctx, struct err *err);

/* Parse len more bytes.  Returns 0 (all used; more may come), 1 (the
 * callback stopped), or -1 with err: the request is bad and
 * http_req_status says how to answer it (400, 413, 431, 501, 505) or 500
 * when out of memory. */
int http_req_feed(struct http_req *p, const void *data, size_t len,
                  struct err *err);

/* The HTTP status of the last error, 0 when there was none. */
int http_req_status(const struct http_req *p);

/* The reason phrase of status ("OK", "Not Found", ...); "Error" for one
 * not listed. */
const char *http_reason(int status);

/* 1 when a request has been started but not completed (bytes of it came). */
int http_req_pending(const struct http_req *p);

void http_req_free(struct http_req *p);

#endif
