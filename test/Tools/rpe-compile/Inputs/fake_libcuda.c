/* A stand-in for the CUDA driver (libcuda.so.1) that runs nothing: "device"
 * memory is host memory, copies are memcpy, launches are only counted. It
 * lets tests follow what librpe_cuda_runtime and the generated C wrappers
 * do (allocations, copies, frees, the stream of each launch) on machines
 * without a GPU. FAKE_CUDA_FAIL=1 makes cuInit fail (no device);
 * FAKE_CUDA_DEINIT=1 answers as a driver that has shut down (at exit):
 * CUDA_ERROR_DEINITIALIZED, and no error names. FAKE_CUDA_FAULT=1 makes the
 * first kernel fail (CUDA_ERROR_LAUNCH_FAILED at the next synchronization)
 * and every call after it, as a lost context does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static int launches, streamsCreated, streamsDestroyed;
static long liveAllocations;
static size_t copiedBytes;
static void *lastStream;
/* FAKE_CUDA_FAULT: a kernel ran; the context is lost from the next sync. */
static int launchedFaulty, lost;

/* CUDA_ERROR_LAUNCH_FAILED once the context is lost, else 0. */
static CUresult lostResult(void) { return lost ? 719 : 0; }

int fake_cuda_launches(void) { return launches; }
int fake_cuda_streams_created(void) { return streamsCreated; }
int fake_cuda_streams_destroyed(void) { return streamsDestroyed; }
long fake_cuda_live_allocations(void) { return liveAllocations; }
size_t fake_cuda_copied_bytes(void) { return copiedBytes; }
void *fake_cuda_last_stream(void) { return lastStream; }

CUresult cuInit(unsigned flags) {
  (void)flags;
  return getenv("FAKE_CUDA_FAIL") ? 100 /* CUDA_ERROR_NO_DEVICE */ : 0;
}
CUresult cuGetErrorName(CUresult r, const char **name) {
  if (getenv("FAKE_CUDA_DEINIT"))
    return 4; /* CUDA_ERROR_DEINITIALIZED */
  *name = r == 100   ? "CUDA_ERROR_NO_DEVICE"
          : r == 719 ? "CUDA_ERROR_LAUNCH_FAILED"
                     : "CUDA_ERROR_UNKNOWN";
  return 0;
}
CUresult cuDeviceGetCount(int *count) {
  *count = getenv("FAKE_CUDA_FAIL") ? 0 : 1;
  return 0;
}
CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return 0;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  (void)attribute, (void)device;
  *value = 49152;
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **context, int device) {
  (void)device;
  *context = (void *)&launches;
  return 0;
}
CUresult cuCtxPushCurrent_v2(void *context) {
  (void)context;
  return getenv("FAKE_CUDA_DEINIT") ? 4 /* CUDA_ERROR_DEINITIALIZED */ : 0;
}
CUresult cuCtxPopCurrent_v2(void **context) {
  *context = (void *)&launches;
  return 0;
}
CUresult cuModuleLoadData(void **module, const void *image) {
  (void)image;
  *module = malloc(1);
  return 0;
}
CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned n,
                            int *options, void **values) {
  (void)n, (void)options, (void)values;
  return cuModuleLoadData(module, image);
}
CUresult cuModuleUnload(void *module) {
  free(module);
  return 0;
}
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  (void)module, (void)name;
  *function = (void *)&streamsCreated;
  return 0;
}
CUresult cuFuncSetAttribute(void *function, int attribute, int value) {
  (void)function, (void)attribute, (void)value;
  return 0;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        void *stream, void **params, void **extra) {
  (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz;
  (void)shared, (void)params, (void)extra;
  if (lost)
    return lostResult();
  launchedFaulty = getenv("FAKE_CUDA_FAULT") != NULL;
  ++launches;
  lastStream = stream;
  return 0;
}
CUresult cuStreamCreate(void **stream, unsigned flags) {
  (void)flags;
  *stream = malloc(1);
  ++streamsCreated;
  return 0;
}
CUresult cuStreamSynchronize(void *stream) {
  (void)stream;
  lost |= launchedFaulty;
  return lostResult();
}
CUresult cuStreamDestroy_v2(void *stream) {
  free(stream);
  ++streamsDestroyed;
  return 0;
}
CUresult cuStreamWaitEvent(void *stream, void *event, unsigned flags) {
  (void)stream, (void)event, (void)flags;
  return 0;
}
CUresult cuEventCreate(void **event, unsigned flags) {
  (void)flags;
  *event = malloc(1);
  return 0;
}
CUresult cuEventDestroy_v2(void *event) {
  free(event);
  return 0;
}
CUresult cuEventRecord(void *event, void *stream) {
  (void)event, (void)stream;
  return 0;
}
CUresult cuEventSynchronize(void *event) {
  (void)event;
  return 0;
}
CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) {
  if (lost)
    return lostResult();
  *ptr = (CUdeviceptr)(uintptr_t)malloc(bytes);
  ++liveAllocations;
  return 0;
}
CUresult cuMemAllocManaged(CUdeviceptr *ptr, size_t bytes, unsigned flags) {
  (void)flags;
  return cuMemAlloc_v2(ptr, bytes);
}
CUresult cuMemFree_v2(CUdeviceptr ptr) {
  if (lost)
    return lostResult();
  free((void *)(uintptr_t)ptr);
  --liveAllocations;
  return 0;
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                       void *stream) {
  (void)stream;
  memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  copiedBytes += bytes;
  return 0;
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t n,
                          void *stream) {
  (void)stream;
  for (size_t i = 0; i < n; ++i)
    ((unsigned *)(uintptr_t)dst)[i] = value;
  return 0;
}
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t n,
                          void *stream) {
  (void)stream;
  for (size_t i = 0; i < n; ++i)
    ((unsigned short *)(uintptr_t)dst)[i] = value;
  return 0;
}
CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned flags) {
  (void)p, (void)bytes, (void)flags;
  return 0;
}
CUresult cuMemHostUnregister(void *p) {
  (void)p;
  return 0;
}
