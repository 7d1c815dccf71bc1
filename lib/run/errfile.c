/* errfile.c - see errfile.h.  Not a JSON parser: it looks for the first
 * "message" key whose value is a string (torch nests it one object deep)
 * and the "timestamp" key, and skips everything else. */
#include "run/errfile.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Append code point c as UTF-8 to out (cap bytes, *n used). */
static void put_utf8(char *out, size_t cap, size_t *n, unsigned c)
{
    char b[3];
    size_t k = 0;

    if (c < 0x80) {
        b[k++] = (char)c;
    } else if (c < 0x800) {
        b[k++] = (char)(0xc0 | c >> 6);
        b[k++] = (char)(0x80 | (c & 0x3f));
    } else {
        b[k++] = (char)(0xe0 | c >> 12);
        b[k++] = (char)(0x80 | (c >> 6 & 0x3f));
        b[k++] = (char)(0x80 | (c & 0x3f));
    }
    if (*n + k < cap) {
        memcpy(out + *n, b, k);
        *n += k;
    }
}

static unsigned hex4(const char *s)
{
    unsigned v = 0;

    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v = v << 4 | (unsigned)(c >= '0' && c <= '9' ? c - '0' :
                                c >= 'a' && c <= 'f' ? c - 'a' + 10 :
                                c >= 'A' && c <= 'F' ? c - 'A' + 10 : 0);
    }
    return v;
}

/* The JSON string at text[*i] (the opening quote) into out (cap bytes,
 * cut to fit); *i moves past the closing quote or to len. */
static void read_string(const char *t, size_t len, size_t *i, char *out,
                        size_t cap)
{
    static const char esc[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
    size_t n = 0;

    for ((*i)++; *i < len && t[*i] != '"'; (*i)++) {
        unsigned c = (unsigned char)t[*i];
        const char *e;

        if (c == '\\' && *i + 1 < len) {
            c = (unsigned char)t[++*i];
            if (c == 'u' && *i + 4 < len) {
                c = hex4(t + *i + 1);
                *i += 4;
            } else if ((e = c ? strchr(esc, (int)c) : NULL) &&
                       (e - esc) % 2 == 0) {
                c = (unsigned char)e[1];
            }
            put_utf8(out, cap, &n, c);
        } else if (n + 1 < cap) {
            out[n++] = (char)c;
        }
    }
    out[n] = '\0';
    if (*i < len)
        (*i)++;
}

static size_t skip_space(const char *t, size_t len, size_t i)
{
    while (i < len && strchr(" \t\r\n", t[i]) && t[i])
        i++;
    return i;
}

/* A key's value at t[*i]: "message" (a string) and "timestamp". */
static void read_value(const char *key, const char *t, size_t len, size_t *i,
                       struct errfile *out)
{
    char val[512];

    if (*i < len && t[*i] == '"') {
        read_string(t, len, i, val, sizeof val);
        if (strcmp(key, "message") == 0 && !out->message[0]) {
            val[strcspn(val, "\n")] = '\0';
            memcpy(out->message, val, sizeof out->message);
        } else if (strcmp(key, "timestamp") == 0) {
            out->timestamp = strtol(val, NULL, 10);
        }
    } else if (*i < len && strcmp(key, "timestamp") == 0) {
        char num[24];
        size_t n = 0;
        while (*i < len && n + 1 < sizeof num && t[*i] >= '0' && t[*i] <= '9')
            num[n++] = t[(*i)++];
        num[n] = '\0';
        out->timestamp = strtol(num, NULL, 10);
    }
}

int errfile_parse(const char *t, size_t len, struct errfile *out)
{
    char key[64];
    size_t i = 0;

    memset(out, 0, sizeof *out);
    while (i < len) {
        if (t[i] != '"') {
            i++;
            continue;
        }
        read_string(t, len, &i, key, sizeof key);
        i = skip_space(t, len, i);
        if (i < len && t[i] == ':') {
            i = skip_space(t, len, i + 1);
            read_value(key, t, len, &i, out);
        }
    }
    return out->message[0] ? 0 : -1;
}

int errfile_from_wire(const void *val, size_t len, struct errfile *out)
{
    const unsigned char *p = val;

    memset(out, 0, sizeof *out);
    if (!val || len == 0 || len >= sizeof out->message)
        return -1;
    for (size_t i = 0; i < len; i++)
        out->message[i] = p[i] < 0x20 || p[i] == 0x7f ? '?' : (char)p[i];
    return 0;
}

int errfile_read(const char *path, struct errfile *out)
{
    enum { MAX = 65536 };
    char *buf = malloc(MAX);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    size_t len = 0;
    ssize_t n = 1;
    int rc = -1;

    memset(out, 0, sizeof *out);
    if (fd < 0 || !buf)
        goto out;
    while (len < MAX && n > 0) {
        n = read(fd, buf + len, MAX - len);
        len += n > 0 ? (size_t)n : 0;
    }
    rc = len > 0 ? errfile_parse(buf, len, out) : -1;
out:
    if (fd >= 0)
        close(fd);
    free(buf);
    return rc;
}
