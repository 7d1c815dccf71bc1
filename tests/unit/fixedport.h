/* fixedport.h - ports for a test to hand to code that listens on them.
 * Never the kernel's ephemeral ports (ip_local_port_range): binding port 0
 * and closing returns one of those, and any neighbour's outgoing
 * connection may take it before the code under test binds it.  Nor
 * 20000-29999, where dlrun derives per-task ports and torchrun listens by
 * default.  Header only. */
#ifndef DLRUN_FIXEDPORT_H
#define DLRUN_FIXEDPORT_H

#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static inline int fixedport_usable(int p, int lo, int hi)
{
    return !(p >= lo && p <= hi) && !(p >= 20000 && p <= 29999);
}

/* Fill ports with n different ports, each free now on every address (all
 * held bound while choosing, so they differ), starting at a port that
 * varies with time and pid so that tests running at once try different
 * ones.  0, or -1 when fewer than n are free. */
static inline int fixed_ports(int *ports, int n)
{
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    int lo = 32768, hi = 60999, got = 0, fds[64];
    unsigned span = 65536 - 10000,
             start = (unsigned)time(NULL) * 7919u + (unsigned)getpid();

    if (f) {
        if (fscanf(f, "%d %d", &lo, &hi) != 2)
            lo = 32768, hi = 60999;
        fclose(f);
    }
    for (unsigned i = 0; i < span && got < n && got < 64; i++) {
        int p = 10000 + (int)((start + i) % span), fd;
        struct sockaddr_in sa = { .sin_family = AF_INET,
                                  .sin_port = htons((unsigned short)p) };

        if (!fixedport_usable(p, lo, hi) ||
            (fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
            continue;
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
            close(fd);
            continue;
        }
        fds[got] = fd;
        ports[got++] = p;
    }
    for (int i = 0; i < got; i++)
        close(fds[i]);
    return got == n ? 0 : -1;
}

#endif
