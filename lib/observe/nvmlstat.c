/* nvmlstat.c - GPU use from NVML loaded with dlopen (nvmlstat.h).  The
 * few NVML types and functions used are declared here, as NVML's
 * documented ABI has them, so no NVML header is needed to build. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "observe/nvmlstat.h"

typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;

struct nvs {
    void *h;
    int (*shutdown)(void);
    int (*count)(unsigned int *);
    int (*by_index)(unsigned int, nvmlDevice_t *);
    int (*by_uuid)(const char *, nvmlDevice_t *);
    int (*util)(nvmlDevice_t, nvmlUtilization_t *);
    int (*mem)(nvmlDevice_t, nvmlMemory_t *);
};

int nvs_parse_visible(const char *cvd, struct nvs_dev *out, int max)
{
    int n = 0;
    const char *p = cvd;

    while (p && *p && n < max) {
        size_t k = strcspn(p, ",");
        char e[NVS_UUID];
        char *end = NULL;
        snprintf(e, sizeof e, "%.*s", (int)(k < sizeof e - 1 ? k :
                 sizeof e - 1), p);
        long v = strtol(e, &end, 10);
        if (e[0] >= '0' && e[0] <= '9' && !*end && v < 1 << 20) {
            out[n].index = (int)v;
            out[n].uuid[0] = '\0';
        } else if (strncmp(e, "GPU-", 4) == 0 && k < sizeof e) {
            out[n].index = -1;
            snprintf(out[n].uuid, NVS_UUID, "%s", e);
        } else {
            break;      /* CUDA ignores this entry and all after it */
        }
        n++;
        p += k + (p[k] == ',');
    }
    return n;
}

int nvs_proc_visible(pid_t pid, char *buf, size_t len)
{
    char path[64], env[65536];
    static const char key[] = "CUDA_VISIBLE_DEVICES=";
    ssize_t got;
    int fd, rc = 0;

    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    got = fd >= 0 ? read(fd, env, sizeof env - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (got < 0)
        return -1;
    env[got] = '\0';
    for (char *e = env; e < env + got; e += strlen(e) + 1)
        if (strncmp(e, key, sizeof key - 1) == 0) {
            snprintf(buf, len, "%s", e + sizeof key - 1);
            rc = 1;     /* the last one wins, as getenv's would */
        }
    return rc;
}

/* dlsym into a function pointer (POSIX allows the conversion; memcpy
 * says so without a cast ISO C frowns upon). */
static int sym(void *h, const char *name, void *fp, size_t size)
{
    void *s = dlsym(h, name);

    if (s)
        memcpy(fp, &s, size);
    return s ? 0 : -1;
}

struct nvs *nvs_open(void)
{
    const char *lib = getenv("DLRUN_NVML_LIBRARY");
    struct nvs *n = calloc(1, sizeof *n);
    int (*init)(void) = NULL;

    if (!lib || !*lib)
        lib = "libnvidia-ml.so.1";
    if (!n || !(n->h = dlopen(lib, RTLD_NOW | RTLD_LOCAL)))
        goto fail;
    if (sym(n->h, "nvmlInit_v2", &init, sizeof init) < 0 ||
        sym(n->h, "nvmlShutdown", &n->shutdown, sizeof n->shutdown) < 0 ||
        sym(n->h, "nvmlDeviceGetCount_v2", &n->count, sizeof n->count) < 0 ||
        sym(n->h, "nvmlDeviceGetHandleByIndex_v2", &n->by_index,
            sizeof n->by_index) < 0 ||
        sym(n->h, "nvmlDeviceGetHandleByUUID", &n->by_uuid,
            sizeof n->by_uuid) < 0 ||
        sym(n->h, "nvmlDeviceGetUtilizationRates", &n->util,
            sizeof n->util) < 0 ||
        sym(n->h, "nvmlDeviceGetMemoryInfo", &n->mem, sizeof n->mem) < 0 ||
        init() != 0)
        goto fail;
    return n;
fail:
    if (n && n->h)
        dlclose(n->h);
    free(n);
    return NULL;
}

void nvs_close(struct nvs *n)
{
    if (!n)
        return;
    n->shutdown();
    dlclose(n->h);
    free(n);
}

int nvs_sample(struct nvs *n, const char *cvd, double *util,
               long long *mem_kb)
{
    struct nvs_dev dev[NVS_MAX_GPUS];
    unsigned int count = 0;
    int nd, got = 0;
    double sum = 0;

    *mem_kb = 0;
    if (cvd) {
        nd = nvs_parse_visible(cvd, dev, NVS_MAX_GPUS);
    } else {
        nd = n->count(&count) == 0 ? (int)count : 0;
        nd = nd < NVS_MAX_GPUS ? nd : NVS_MAX_GPUS;
        for (int i = 0; i < nd; i++)
            dev[i] = (struct nvs_dev){ .index = i };
    }
    for (int i = 0; i < nd; i++) {
        nvmlDevice_t d;
        nvmlUtilization_t u;
        nvmlMemory_t m;
        int rc = dev[i].index >= 0 ?
            n->by_index((unsigned int)dev[i].index, &d) :
            n->by_uuid(dev[i].uuid, &d);
        if (rc != 0 || n->util(d, &u) != 0 || n->mem(d, &m) != 0)
            continue;   /* a GPU that fell off the bus: the others count */
        sum += u.gpu;
        *mem_kb += (long long)(m.used / 1024);
        got++;
    }
    *util = got ? sum / got : -1;
    return got ? 0 : -1;
}
