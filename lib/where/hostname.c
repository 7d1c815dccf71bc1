/* hostname.c - checking host and login names (see hostname.h). */
#include "where/hostname.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define SHOW_MAX 64     /* bytes of the name quoted in a message */

static const char WHAT_IS[] = "a host name is letters, digits, '-' and '.' "
    "(RFC 1123), an IPv4 address or an IPv6 address";

/* The name for a message (err_quote); buf holds SHOW_MAX + 4 bytes. */
static const char *show(char *buf, const char *s, size_t len)
{
    return err_quote(buf, SHOW_MAX, s, len);
}

static int refuse(const char *name, const char *why, struct err *err)
{
    char buf[SHOW_MAX + 4];

    return err_set(err, "host name \"%s\": %s; %s", show(buf, name,
                   strlen(name)), why, WHAT_IS);
}

/* An IPv6 address (len bytes at s), maybe with a "%zone". */
static bool ipv6(const char *s, size_t len)
{
    char buf[64];
    const char *pct = memchr(s, '%', len);
    size_t alen = pct ? (size_t)(pct - s) : len;
    struct in6_addr a;

    if (alen == 0 || alen >= sizeof buf)
        return false;
    for (const char *z = pct ? pct + 1 : s + len; z < s + len; z++)
        if (!isalnum((unsigned char)*z) && !strchr("._-", *z))
            return false;
    if (pct && pct + 1 == s + len)
        return false;           /* an empty zone */
    memcpy(buf, s, alen);
    buf[alen] = '\0';
    return inet_pton(AF_INET6, buf, &a) == 1;
}

int hostname_is_ipv6(const char *name)
{
    size_t len = strlen(name);

    if (len >= 2 && name[0] == '[' && name[len - 1] == ']')
        return ipv6(name + 1, len - 2);
    return ipv6(name, len);
}

/* Why label (len bytes) is not a DNS label, or NULL. */
static const char *bad_label(const char *label, size_t len)
{
    if (len == 0)
        return "an empty label (two dots, or a dot first)";
    if (len > 63)
        return "a label longer than 63 bytes";
    if (label[0] == '-')
        return "a label starts with '-'";
    if (label[len - 1] == '-')
        return "a label ends with '-'";
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)label[i]) && label[i] != '-' &&
            label[i] != '_')
            return "a character that no host name holds";
    return NULL;
}

/* A DNS name: labels, maybe one final '.'. */
static int dns_name(const char *name, struct err *err)
{
    size_t len = strlen(name);
    const char *p = name, *why;

    if (len > 1 && name[len - 1] == '.')
        len--;
    if (strspn(name, "0123456789.") == strlen(name)) {
        struct in_addr a;
        return inet_pton(AF_INET, name, &a) == 1 ? 0 :
               refuse(name, "not an IPv4 address (write four numbers from "
                      "0 to 255, as in 10.0.0.1)", err);
    }
    while (p <= name + len) {
        size_t l = strcspn(p, ".");

        if (p + l > name + len)
            l = (size_t)(name + len - p);
        if ((why = bad_label(p, l)))
            return refuse(name, why, err);
        p += l + 1;
    }
    return 0;
}

int hostname_check(const char *name, struct err *err)
{
    size_t len = strlen(name);

    if (len == 0)
        return err_set(err, "empty host name; %s", WHAT_IS);
    if (name[0] == '[' || strchr(name, ':'))
        return hostname_is_ipv6(name) ? 0 :
               refuse(name, "not an IPv6 address", err);
    if (len > HOSTNAME_MAX + (name[len - 1] == '.'))
        return refuse(name, "longer than 253 bytes", err);
    return dns_name(name, err);
}

int hostname_check_login(const char *login, size_t len, struct err *err)
{
    char buf[SHOW_MAX + 4];
    const char *why = NULL;

    if (len == 0)
        why = "empty";
    else if (len > LOGIN_MAX)
        why = "longer than 32 bytes";
    else if (login[0] == '-')
        why = "starts with '-'";
    for (size_t i = 0; !why && i < len; i++)
        if (!isalnum((unsigned char)login[i]) && !strchr("._-", login[i]))
            why = "a character that no login name holds";
    if (!why)
        return 0;
    return err_set(err, "login name \"%s\" (before '@'): %s; a login name is "
                   "letters, digits, '.', '_' and '-'", show(buf, login, len),
                   why);
}
