/* t_hostname.c - what may be a host name or a login name (issue 11 item
 * 9): names that would be options or shell text on a command line are
 * refused with one line saying why. */
#include <stdio.h>
#include <string.h>

#include "where/hostname.h"
#include "tap.h"

/* why: a part of the message, NULL when the name is taken. */
struct row {
    const char *name, *why;
};

static const struct row rows[] = {
    { "node01", NULL },
    { "gpu-a100-07.cluster.example.org", NULL },
    { "n1.", NULL },                    /* fully qualified, final dot */
    { "Node_7", NULL },                 /* '_' is tolerated */
    { "7up", NULL },                    /* RFC 1123: a digit may lead */
    { "localhost", NULL },
    { "10.0.0.1", NULL },
    { "255.255.255.255", NULL },
    { "fe80::1", NULL },
    { "[fe80::1]", NULL },
    { "::1", NULL },
    { "fe80::1%eth0", NULL },
    { "2001:db8::8a2e:370:7334", NULL },
    /* the examples */
    { "--ssh-config=x", "a label starts with '-'" },
    { "$(touch", "a character that no host name holds" },
    { "-oProxyCommand=sh", "a label starts with '-'" },
    /* not host names */
    { "", "empty host name" },
    { "a b", "a character" },
    { "a;b", "a character" },
    { "a`id`", "a character" },
    { "a/b", "a character" },
    { "a@b", "a character" },
    { "n1-", "a label ends with '-'" },
    { "x..y", "an empty label" },
    { ".x", "an empty label" },
    { "999.1.1.1", "not an IPv4 address" },
    { "10.0.0", "not an IPv4 address" },
    { "1234", "not an IPv4 address" },
    { "fe80::g", "not an IPv6 address" },
    { "[fe80::1", "not an IPv6 address" },
    { "[n1]", "not an IPv6 address" },
    { "fe80::1%", "not an IPv6 address" },
    { "fe80::1%a;b", "not an IPv6 address" },
    { "a:b", "not an IPv6 address" },
    { "a\nb", "a character" },
    { "a123456789012345678901234567890123456789012345678901234567890123",
      "a label longer than 63 bytes" },
};

static void test_rows(void)
{
    char what[200];

    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct row *r = &rows[i];
        struct err err = { "" };
        int rc = hostname_check(r->name, &err);

        snprintf(what, sizeof what, "'%s' %s", r->name,
                 r->why ? "refused" : "taken");
        for (char *p = what; *p; p++)
            *p = *p == '\n' ? '?' : *p;
        if (!r->why) {
            if (!ok(rc == 0, what))
                printf("#   %s\n", err.msg);
            continue;
        }
        if (!ok(rc < 0 && strstr(err.msg, r->why) && !strchr(err.msg, '\n'),
                what))
            printf("#   %s\n", err.msg);
    }
}

static void test_long(void)
{
    char name[300];
    struct err err = { "" };

    /* 4 labels of 63 + 3 dots = 255 bytes: over 253 */
    memset(name, 'a', sizeof name);
    for (int i = 63; i < 255; i += 64)
        name[i] = '.';
    name[255] = '\0';
    ok(hostname_check(name, &err) < 0 && strstr(err.msg, "longer than 253"),
       "a name of 255 bytes is refused");
    name[251] = '\0';           /* 251 bytes */
    ok(hostname_check(name, &err) == 0, "a name of 251 bytes is taken");
}

static void test_logins(void)
{
    struct err err = { "" };

    ok(hostname_check_login("alice", 5, &err) == 0, "login alice");
    ok(hostname_check_login("a.b_c-d", 7, &err) == 0, "login a.b_c-d");
    ok(hostname_check_login("-oX", 3, &err) < 0 &&
       strstr(err.msg, "starts with '-'"), "login -oX refused");
    ok(hostname_check_login("a b", 3, &err) < 0, "login with a space refused");
    ok(hostname_check_login("", 0, &err) < 0, "empty login refused");
    ok(hostname_check_login("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 33, &err) < 0,
       "login of 33 bytes refused");
}

int main(void)
{
    test_rows();
    test_long();
    test_logins();
    ok(hostname_is_ipv6("[::1]") && hostname_is_ipv6("::1") &&
       !hostname_is_ipv6("n1") && !hostname_is_ipv6("[n1]"), "is_ipv6");
    return tap_done();
}
