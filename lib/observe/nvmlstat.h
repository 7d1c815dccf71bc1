/* nvmlstat.h - GPU use of a rank for `dlrun status`, from NVML when the
 * node has it: libnvidia-ml.so.1 (or $DLRUN_NVML_LIBRARY) loaded with
 * dlopen at the first sample, never linked, so a node without the NVIDIA
 * driver runs dlrun as before and simply shows no GPU column.
 *
 * A rank's GPUs are those its CUDA_VISIBLE_DEVICES names (read from
 * /proc/PID/environ: what dlrun's plan, the scheduler or the user set):
 * an index is NVML's index (CUDA's order when CUDA_DEVICE_ORDER=PCI_BUS_ID,
 * which is NVML's), a "GPU-..." entry its UUID; unset means every GPU of
 * the node. */
#ifndef DLRUN_NVMLSTAT_H
#define DLRUN_NVMLSTAT_H

#include <stddef.h>
#include <sys/types.h>

#define NVS_MAX_GPUS 64
#define NVS_UUID 96

struct nvs_dev {
    int index;              /* NVML index, -1: by uuid */
    char uuid[NVS_UUID];    /* "GPU-...", "" when by index */
};

/* The devices CUDA_VISIBLE_DEVICES=cvd names, into out (room max), as
 * CUDA reads it: a comma list, cut at the first entry that is neither an
 * index nor a GPU UUID (MIG entries too: their use is not the GPU's).
 * Returns how many (0: no GPU visible).  Pure: no NVML needed. */
int nvs_parse_visible(const char *cvd, struct nvs_dev *out, int max);

/* CUDA_VISIBLE_DEVICES of process pid into buf (len): 1 set, 0 unset, -1
 * its environment cannot be read (gone, or not ours). */
int nvs_proc_visible(pid_t pid, char *buf, size_t len);

struct nvs;

/* NVML loaded and initialised; NULL when the library is absent or its
 * init fails (no GPU, no error).  The caller owns it: nvs_close. */
struct nvs *nvs_open(void);
void nvs_close(struct nvs *n);

/* GPU use of the devices cvd names (NULL: all of the node): *util the
 * mean of their utilisation %, *mem_kb the sum of their memory used.
 * 0, or -1 when no device could be read. */
int nvs_sample(struct nvs *n, const char *cvd, double *util,
               long long *mem_kb);

#endif
