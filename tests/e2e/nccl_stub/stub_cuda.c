/* stub_cuda.c - libcudart.so for t_nccl_example.sh: the few CUDA runtime
 * calls of contrib/examples/nccl_allreduce.c, on host memory.  Four
 * "devices" (STUB_CUDA_DEVICES overrides). */
#include "cuda_runtime.h"

#include <stdlib.h>
#include <string.h>

static int current = -1;

const char *cudaGetErrorString(cudaError_t error)
{
    return error == cudaSuccess ? "no error" : "stub CUDA error";
}

cudaError_t cudaGetDeviceCount(int *count)
{
    const char *v = getenv("STUB_CUDA_DEVICES");

    *count = v ? atoi(v) : 4;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    int n = 0;

    cudaGetDeviceCount(&n);
    if (device < 0 || device >= n)
        return cudaErrorInvalidDevice;
    current = device;
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    if (current < 0)
        return cudaErrorInvalidDevice;
    *devPtr = malloc(size);
    return *devPtr ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaFree(void *devPtr)
{
    free(devPtr);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
                       enum cudaMemcpyKind kind)
{
    (void)kind;
    memcpy(dst, src, count);
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    *pStream = (cudaStream_t)malloc(1);
    return *pStream ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    return stream ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    free(stream);
    return cudaSuccess;
}
