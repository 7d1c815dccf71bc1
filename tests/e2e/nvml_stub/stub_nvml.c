/* stub_nvml.c - a stand-in libnvidia-ml.so.1 for t_status_gpu.sh: two
 * GPUs, GPU-stub-0 at 37 % with 1000 MiB used and GPU-stub-1 at 81 %
 * with 3000 MiB, so `dlrun status` shows numbers the test knows.
 * STUB_NVML_INIT_FAIL=1: nvmlInit_v2 fails (as without a driver). */
#include <stdlib.h>
#include <string.h>

typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;

static int devs[2] = { 0, 1 };

int nvmlInit_v2(void) { return getenv("STUB_NVML_INIT_FAIL") ? 9 : 0; }
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned int *n) { *n = 2; return 0; }

int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
    if (i > 1)
        return 2;   /* NVML_ERROR_INVALID_ARGUMENT */
    *d = (nvmlDevice_t)(void *)&devs[i];
    return 0;
}

int nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *d)
{
    if (strcmp(uuid, "GPU-stub-0") == 0)
        return nvmlDeviceGetHandleByIndex_v2(0, d);
    if (strcmp(uuid, "GPU-stub-1") == 0)
        return nvmlDeviceGetHandleByIndex_v2(1, d);
    return 6;       /* NVML_ERROR_NOT_FOUND */
}

int nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
    u->gpu = *(int *)(void *)d ? 81 : 37;
    u->memory = 10;
    return 0;
}

int nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
    m->total = 16ULL << 30;
    m->used = (*(int *)(void *)d ? 3000ULL : 1000ULL) << 20;
    m->free = m->total - m->used;
    return 0;
}
