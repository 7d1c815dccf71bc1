/* fuzz_pmic.c - libFuzzer target for the simple PMI-1 client: any bytes
 * as one wire line (pmic_field, pmic_reply), and the same bytes as
 * everything a PMI server answers on PMI_FD during init and the agreement
 * of rank 0's address or a get (over a socketpair; the first byte picks
 * the rank, the get and whether to finalize).  It never crashes or hangs; an agreement that
 * succeeds has a port of 1-65535 and an address that fits. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "where/pmic.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void as_line(const uint8_t *data, size_t size)
{
    char *line = malloc(size + 1), val[64];
    struct err err = { "" };

    if (!line)
        return;
    memcpy(line, data, size);
    line[size] = '\0';
    if (pmic_field(line, "value", val, sizeof val) == 0 &&
        strlen(val) >= sizeof val)
        abort();
    pmic_reply(line, "get_result", "cmd=get", &err);
    if (strlen(err.msg) >= sizeof err.msg)
        abort();
    free(line);
}

static void as_replies(const uint8_t *data, size_t size)
{
    int sv[2], port = 1234;
    char fdvar[32], addr[64] = "10.0.0.1", sink[4096];
    char *envp[] = { fdvar, "PMI_RANK=0", "PMI_SIZE=2", NULL };
    struct err err = { "" };

    if (size < 1 || size > 60000 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        return;
    snprintf(fdvar, sizeof fdvar, "PMI_FD=%d", sv[0]);
    if (write(sv[1], data + 1, size - 1) == (ssize_t)(size - 1)) {
        shutdown(sv[1], SHUT_WR);   /* EOF after the replies: no hang */
        struct pmic c;
        int rc = pmic_open(envp, 1000, &c, &err);

        if (rc == 0 && (data[0] >> 2) & 1)
            rc = pmic_get(&c, "PMI_process_mapping", sink, sizeof sink, &err);
        else if (rc == 0)
            rc = pmic_agree_master(&c, data[0] & 1, addr, sizeof addr, &port,
                                   &err);
        if (rc == 0 && (port < 1 || port > 65535 || strlen(addr) >= sizeof addr))
            abort();
        if (rc == 0 && (data[0] >> 1) & 1)
            pmic_finalize(&c, &err);
        pmic_close(&c);
        shutdown(sv[0], SHUT_WR);
        while (read(sv[1], sink, sizeof sink) > 0)
            ;
    }
    close(sv[0]);
    close(sv[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    as_line(data, size);
    as_replies(data, size);
    return 0;
}
