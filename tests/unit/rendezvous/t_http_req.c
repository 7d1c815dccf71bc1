/* t_http_req.c - the HTTP request engine: what Horovod's client sends,
 * in pieces of every size, and each kind of bad request with the status
 * it is answered with. */
#include <stdlib.h>
#include <string.h>

#include "rendezvous/http_req.h"
#include "tap.h"

struct seen {
    int n, stop_after;
    char method[3][16], target[3][64], body[3][64];
    int has_length[3], close[3];
};

static int on_req(void *ctx, const struct http_request *r)
{
    struct seen *s = ctx;

    if (s->n < 3) {
        snprintf(s->method[s->n], 16, "%s", r->method);
        snprintf(s->target[s->n], 64, "%s", r->target);
        snprintf(s->body[s->n], 64, "%.*s", (int)r->body_len,
                 r->body ? (const char *)r->body : "");
        s->has_length[s->n] = r->has_length;
        s->close[s->n] = r->close;
    }
    s->n++;
    return s->stop_after && s->n >= s->stop_after;
}

/* Feed text in pieces of piece bytes; the last feed's result. */
static int feed(const char *text, size_t piece, struct seen *s, int *status)
{
    struct http_req p;
    struct err err = { "" };
    size_t len = strlen(text);
    int rc = 0;

    http_req_init(&p, 256, 32, on_req, s, &err);
    for (size_t off = 0; off < len && rc == 0; off += piece)
        rc = http_req_feed(&p, text + off, len - off < piece ? len - off : piece,
                           &err);
    *status = http_req_status(&p);
    http_req_free(&p);
    return rc;
}

/* Horovod's HTTPStore (HTTPRequest.hpp): request line, Host,
 * Content-Length, body; the answer is read until the server closes. */
static const char put_get[] =
    "PUT /global_/rank_0 HTTP/1.1\r\nHost: 10.0.0.1\r\nContent-Length: 5\r\n"
    "\r\nhello"
    "GET /global_/rank_0 HTTP/1.1\r\nHost: 10.0.0.1\r\nContent-Length: 0\r\n\r\n";

static void test_pieces(void)
{
    static const size_t sizes[] = { 1, 2, 3, 7, 50, 4096 };

    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        struct seen s = { 0 };
        int status, rc = feed(put_get, sizes[i], &s, &status);
        char what[64];
        snprintf(what, sizeof what, "PUT then GET in %zu-byte pieces", sizes[i]);
        ok(rc == 0 && s.n == 2 && strcmp(s.method[0], "PUT") == 0 &&
           strcmp(s.target[0], "/global_/rank_0") == 0 &&
           strcmp(s.body[0], "hello") == 0 && s.has_length[0] &&
           strcmp(s.method[1], "GET") == 0 && s.body[1][0] == '\0' &&
           !s.close[0], what);
    }
}

static void test_stop_and_forms(void)
{
    struct seen s = { .stop_after = 1 };
    int status;

    is_int(feed(put_get, 4096, &s, &status), 1, "the callback stops after one");
    is_int(s.n, 1, "the second request is not parsed");
    s = (struct seen){ 0 };
    feed("\r\nDELETE /cross_0/1 HTTP/1.0\n\n", 4096, &s, &status);
    ok(s.n == 1 && strcmp(s.method[0], "DELETE") == 0 && s.close[0] &&
       !s.has_length[0], "bare LF, a leading empty line, HTTP/1.0 closes");
    s = (struct seen){ 0 };
    feed("GET /a/b HTTP/1.1\r\nconnection:  Close \r\ncontent-length: 0\r\n\r\n",
         4096, &s, &status);
    ok(s.n == 1 && s.close[0] && s.has_length[0],
       "header names in any case, spaces around values");
    s = (struct seen){ 0 };
    feed("GET /a/b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", 4096, &s, &status);
    ok(s.n == 1 && !s.close[0], "HTTP/1.0 with keep-alive keeps");
}

static const struct { const char *text; int status; const char *what; } bad[] = {
    { "GET /a/b\r\n\r\n", 400, "no version" },
    { "GET a/b HTTP/1.1\r\n\r\n", 400, "target without /" },
    { "GET /a b HTTP/1.1\r\n\r\n", 400, "space in the target" },
    { "G(T /a/b HTTP/1.1\r\n\r\n", 400, "bad method character" },
    { "GET /a/b HTTP/2.0\r\n\r\n", 505, "HTTP/2.0" },
    { "GET /a/b FTP/1.0\r\n\r\n", 400, "not HTTP" },
    { "PUT /a/b HTTP/1.1\r\nContent-Length: 33\r\n\r\n", 413, "body over the limit" },
    { "PUT /a/b HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, "negative length" },
    { "PUT /a/b HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400,
      "two lengths" },
    { "PUT /a/b HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 400,
      "a length too long to be a number" },
    { "PUT /a/b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 501, "chunked" },
    { "GET /a/b HTTP/1.1\r\n Folded: x\r\n\r\n", 400, "folded header" },
    { "GET /a/b HTTP/1.1\r\nNo colon\r\n\r\n", 400, "header without colon" },
    { "GET /a/b HTTP/1.1\r\nBad Name: x\r\n\r\n", 400, "space in a header name" },
    { "GET /a/b HTTP/1.1\r\nX: a\001b\r\n\r\n", 400, "control character in a value" },
    { "GET /a/b HTTP/1.1\r\nX: a\rb\r\n\r\n", 400, "bare CR" },
};

static void test_bad(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct seen s = { 0 };
        int status, rc = feed(bad[i].text, 3, &s, &status);
        ok(rc == -1 && status == bad[i].status && s.n == 0, bad[i].what);
    }
}

static void test_limits(void)
{
    char big[600];
    struct seen s = { 0 };
    struct http_req p;
    struct err err = { "" };
    int status;

    memset(big, 'a', sizeof big);
    memcpy(big, "GET /", 5);
    big[sizeof big - 1] = '\0';
    is_int(feed(big, 4096, &s, &status), -1, "a head over the limit fails");
    is_int(status, 431, "... with 431");
    http_req_init(&p, 256, 32, on_req, &s, &err);
    http_req_feed(&p, "GET /a/b HTTP/1.1\r\n\r\nXX", 23, &err);
    ok(http_req_pending(&p), "a started second request is pending");
    is_int(http_req_feed(&p, "X", 1, &err), 0, "more bytes are fine");
    http_req_feed(&p, "\001 / HTTP/1.1\r\n\r\n", 17, &err);
    ok(http_req_feed(&p, "GET /a/b HTTP/1.1\r\n\r\n", 21, &err) == -1,
       "after an error every feed fails");
    ok(strstr(err.msg, "400") != NULL, "the error names the status");
    http_req_free(&p);
    is_str(http_reason(404), "Not Found", "reason phrase");
    is_str(http_reason(299), "Error", "unknown reason phrase");
}

int main(void)
{
    test_pieces();
    test_stop_and_forms();
    test_bad();
    test_limits();
    return tap_done();
}
