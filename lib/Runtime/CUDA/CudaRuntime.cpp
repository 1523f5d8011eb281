//===- CudaRuntime.cpp - rpe's mgpu* runtime over the CUDA driver API -----===//
//
// The host code that `gpu-to-llvm` emits (rpe-nvptx-pipeline) calls the
// `mgpu*` functions below, with MLIR 22's signatures. They run on the CUDA
// driver API, which is loaded with dlopen("libcuda.so.1") on first use: the
// library builds and links on machines without a driver (or a toolkit:
// the few driver declarations it needs are spelled out here).
//
// Errors never crash the caller. The first failing call (a missing driver,
// no device, any CUresult other than CUDA_SUCCESS) is reported on stderr
// with the call's name and the driver's error name, and remembered:
// rpeCudaGetLastError() returns it, and every later call does nothing
// (returning null) until rpeCudaClearError(), so a failed module load or
// allocation does not turn into a launch on a null handle.
//
//===----------------------------------------------------------------------===//

#include <dlfcn.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#define RPE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// The driver API, as declared by cuda.h (CUDA 12/13).
using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUdeviceptr = unsigned long long;

constexpr int kStreamNonBlocking = 1;     // CU_STREAM_NON_BLOCKING
constexpr unsigned kMemAttachGlobal = 1;  // CU_MEM_ATTACH_GLOBAL
constexpr int kFuncMaxDynamicShared = 8;  // CU_FUNC_ATTRIBUTE_...
constexpr int kDevMaxSharedOptin = 97;    // CU_DEVICE_ATTRIBUTE_...
constexpr int kJitErrorLogBuffer = 5;     // CU_JIT_ERROR_LOG_BUFFER
constexpr int kJitErrorLogBufferSize = 6; // CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
constexpr int kJitOptimizationLevel = 7;  // CU_JIT_OPTIMIZATION_LEVEL

/// `T` spelled as one type name (a function pointer type in a declaration).
template <typename T> using TypeOf = T;

struct Driver {
#define RPE_CU_FUNCTIONS(X)                                                    \
  X(cuInit, CUresult (*)(unsigned))                                            \
  X(cuGetErrorName, CUresult (*)(CUresult, const char **))                     \
  X(cuDeviceGetCount, CUresult (*)(int *))                                     \
  X(cuDeviceGet, CUresult (*)(CUdevice *, int))                                \
  X(cuDeviceGetAttribute, CUresult (*)(int *, int, CUdevice))                  \
  X(cuDevicePrimaryCtxRetain, CUresult (*)(CUcontext *, CUdevice))             \
  X(cuCtxPushCurrent_v2, CUresult (*)(CUcontext))                              \
  X(cuCtxPopCurrent_v2, CUresult (*)(CUcontext *))                             \
  X(cuModuleLoadData, CUresult (*)(CUmodule *, const void *))                  \
  X(cuModuleLoadDataEx,                                                        \
    CUresult (*)(CUmodule *, const void *, unsigned, int *, void **))          \
  X(cuModuleUnload, CUresult (*)(CUmodule))                                    \
  X(cuModuleGetFunction, CUresult (*)(CUfunction *, CUmodule, const char *))   \
  X(cuFuncSetAttribute, CUresult (*)(CUfunction, int, int))                    \
  X(cuLaunchKernel,                                                            \
    CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, \
                 unsigned, unsigned, CUstream, void **, void **))              \
  X(cuStreamCreate, CUresult (*)(CUstream *, unsigned))                        \
  X(cuStreamSynchronize, CUresult (*)(CUstream))                               \
  X(cuStreamDestroy_v2, CUresult (*)(CUstream))                                \
  X(cuStreamWaitEvent, CUresult (*)(CUstream, CUevent, unsigned))              \
  X(cuEventCreate, CUresult (*)(CUevent *, unsigned))                          \
  X(cuEventDestroy_v2, CUresult (*)(CUevent))                                  \
  X(cuEventRecord, CUresult (*)(CUevent, CUstream))                            \
  X(cuEventSynchronize, CUresult (*)(CUevent))                                 \
  X(cuMemAlloc_v2, CUresult (*)(CUdeviceptr *, size_t))                        \
  X(cuMemAllocManaged, CUresult (*)(CUdeviceptr *, size_t, unsigned))          \
  X(cuMemFree_v2, CUresult (*)(CUdeviceptr))                                   \
  X(cuMemcpyAsync, CUresult (*)(CUdeviceptr, CUdeviceptr, size_t, CUstream))   \
  X(cuMemsetD32Async, CUresult (*)(CUdeviceptr, unsigned, size_t, CUstream))   \
  X(cuMemsetD16Async,                                                          \
    CUresult (*)(CUdeviceptr, unsigned short, size_t, CUstream))               \
  X(cuMemHostRegister_v2, CUresult (*)(void *, size_t, unsigned))              \
  X(cuMemHostUnregister, CUresult (*)(void *))
#define RPE_CU_MEMBER(name, type) TypeOf<type> name = nullptr;
  RPE_CU_FUNCTIONS(RPE_CU_MEMBER)
#undef RPE_CU_MEMBER
  CUcontext context = nullptr;
  CUdevice device = 0;
  int deviceIndex = 0;
};

std::mutex stateMutex;
Driver driver;
bool driverReady = false;
std::string lastError;

/// Records the first error (and prints it); later errors are not recorded
/// again while one is pending.
void fail(const char *format, ...) {
  std::lock_guard<std::mutex> lock(stateMutex);
  if (!lastError.empty())
    return;
  char buffer[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  lastError = buffer;
  fprintf(stderr, "rpe cuda runtime: %s\n", buffer);
}

bool hasError() {
  std::lock_guard<std::mutex> lock(stateMutex);
  return !lastError.empty();
}

/// Loads the driver and sets up the primary context of the default device,
/// once; false (with the error recorded) when that is impossible.
bool ensureDriver() {
  static std::once_flag once;
  static bool ok = false;
  static std::string why;
  std::call_once(once, [] {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *error = dlerror();
      why = std::string("cannot load libcuda.so.1 (is an NVIDIA driver "
                        "installed?): ") +
            (error ? error : "unknown error");
      return;
    }
#define RPE_CU_LOAD(name, type)                                                \
  driver.name = reinterpret_cast<TypeOf<type>>(dlsym(lib, #name));             \
  if (!driver.name) {                                                          \
    why = "libcuda.so.1 has no " #name " (driver too old?)";                   \
    return;                                                                    \
  }
    RPE_CU_FUNCTIONS(RPE_CU_LOAD)
#undef RPE_CU_LOAD
    ok = true;
  });
  if (!ok)
    fail("%s", why.c_str());
  return ok;
}

/// CUDA_ERROR_DEINITIALIZED: the driver is shutting down.
constexpr CUresult kErrorDeinitialized = 4;

const char *errorName(CUresult result) {
  const char *name = nullptr;
  if (driver.cuGetErrorName && driver.cuGetErrorName(result, &name) == 0 &&
      name)
    return name;
  return "unknown CUDA error";
}

/// Whether `result` leaves the context unusable: an illegal address, a
/// launch that failed or timed out, a hardware exception in a kernel.
/// Every later call of the process then fails with the same code.
bool losesContext(CUresult result) {
  return result == 700 || result == 702 || (result >= 714 && result <= 719);
}

/// The first error that lost the context ("" while it is usable).
std::string lostContext;

/// Checks `result` of the driver call `call`; records an error if it failed.
/// Once the context is lost, the messages of the calls that fail after it
/// name the error that lost it: their own call is rarely the culprit (a
/// free in a destructor, an allocation of the next call).
bool check(CUresult result, const char *call) {
  if (result == 0)
    return true;
  std::string earlier;
  if (losesContext(result)) {
    std::lock_guard<std::mutex> lock(stateMutex);
    if (lostContext.empty())
      lostContext = std::string(call) + " failed: " + errorName(result) + " (" +
                    std::to_string(result) + ")";
    else
      earlier = lostContext;
  }
  if (earlier.empty() && losesContext(result))
    fail("%s failed: %s (%d); a kernel failed, and the CUDA context is lost "
         "for the rest of the process",
         call, errorName(result), result);
  else if (!earlier.empty())
    fail("%s failed: %s (%d): the CUDA context was lost earlier, when %s", call,
         errorName(result), result, earlier.c_str());
  else
    fail("%s failed: %s (%d)", call, errorName(result), result);
  return false;
}

#define RPE_CU(call) check(driver.call, #call)

/// The context of the default device, made current for the scope of a
/// runtime call (and restored after, so other CUDA users are not
/// disturbed). `ok` is false if there is no usable device or an earlier
/// error is pending.
struct ScopedContext {
  bool ok = false;
  ScopedContext() {
    if (hasError() || !ensureDriver())
      return;
    {
      std::lock_guard<std::mutex> lock(stateMutex);
      if (!driverReady) {
        int count = 0;
        if (driver.cuInit(0) != 0 || driver.cuDeviceGetCount(&count) != 0 ||
            count == 0) {
          lastError = "no CUDA device available";
          fprintf(stderr, "rpe cuda runtime: %s\n", lastError.c_str());
          return;
        }
        if (driver.deviceIndex >= count) {
          lastError = "no CUDA device " + std::to_string(driver.deviceIndex);
          fprintf(stderr, "rpe cuda runtime: %s\n", lastError.c_str());
          return;
        }
        CUresult r = driver.cuDeviceGet(&driver.device, driver.deviceIndex);
        if (r == 0)
          r = driver.cuDevicePrimaryCtxRetain(&driver.context, driver.device);
        if (r != 0) {
          lastError =
              std::string("cannot set up the CUDA context: ") + errorName(r);
          fprintf(stderr, "rpe cuda runtime: %s\n", lastError.c_str());
          return;
        }
        driverReady = true;
      }
    }
    CUresult pushed = driver.cuCtxPushCurrent_v2(driver.context);
    if (pushed == kErrorDeinitialized) {
      // The driver shuts down at exit, before Python or a C++ destructor
      // releases the last modules and buffers: they went with it. The
      // call fails quietly (its status still says why).
      std::lock_guard<std::mutex> lock(stateMutex);
      if (lastError.empty())
        lastError = "the CUDA driver has shut down (the process is exiting)";
      return;
    }
    ok = check(pushed, "cuCtxPushCurrent_v2(driver.context)");
  }
  ~ScopedContext() {
    if (ok) {
      CUcontext previous;
      RPE_CU(cuCtxPopCurrent_v2(&previous));
    }
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// rpe's own entry points
//===----------------------------------------------------------------------===//

/// The pending error ("" when none).
RPE_EXPORT const char *rpeCudaGetLastError() {
  std::lock_guard<std::mutex> lock(stateMutex);
  return lastError.c_str();
}

/// Forgets the pending error, so calls run again.
RPE_EXPORT void rpeCudaClearError() {
  std::lock_guard<std::mutex> lock(stateMutex);
  lastError.clear();
}

namespace {
/// Device memory the runtime handed out and has not freed: bytes per
/// pointer, the total, and its peak since the last reset (benchmarks read
/// it: the memory of rpe's calls, torch's allocator aside).
std::mutex memoryMutex;
std::unordered_map<void *, uint64_t> liveAllocations;
uint64_t liveBytes = 0, peakBytes = 0;

void noteAllocation(void *ptr, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(memoryMutex);
  liveAllocations[ptr] = bytes;
  liveBytes += bytes;
  if (liveBytes > peakBytes)
    peakBytes = liveBytes;
}

void noteFree(void *ptr) {
  std::lock_guard<std::mutex> lock(memoryMutex);
  auto it = liveAllocations.find(ptr);
  if (it == liveAllocations.end())
    return;
  liveBytes -= it->second;
  liveAllocations.erase(it);
}
} // namespace

/// Bytes of device memory allocated through mgpuMemAlloc and not freed.
RPE_EXPORT uint64_t rpeCudaLiveBytes() {
  std::lock_guard<std::mutex> lock(memoryMutex);
  return liveBytes;
}

/// The most rpeCudaLiveBytes() was since the last rpeCudaResetPeakBytes().
RPE_EXPORT uint64_t rpeCudaPeakBytes() {
  std::lock_guard<std::mutex> lock(memoryMutex);
  return peakBytes;
}

/// Starts a new peak from the bytes live now.
RPE_EXPORT void rpeCudaResetPeakBytes() {
  std::lock_guard<std::mutex> lock(memoryMutex);
  peakBytes = liveBytes;
}

/// Number of CUDA devices, or -1 (and an error) without a driver.
RPE_EXPORT int rpeCudaDeviceCount() {
  if (!ensureDriver())
    return -1;
  int count = 0;
  if (!RPE_CU(cuInit(0)) || !RPE_CU(cuDeviceGetCount(&count)))
    return -1;
  return count;
}

//===----------------------------------------------------------------------===//
// The mgpu* ABI of MLIR 22's gpu-to-llvm
//===----------------------------------------------------------------------===//

RPE_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  std::lock_guard<std::mutex> lock(stateMutex);
  if (driverReady && device != driver.deviceIndex) {
    lastError = "mgpuSetDefaultDevice: the device is fixed after first use";
    fprintf(stderr, "rpe cuda runtime: %s\n", lastError.c_str());
    return;
  }
  driver.deviceIndex = device;
}

RPE_EXPORT void *mgpuModuleLoad(void *data, size_t /*size*/) {
  ScopedContext scope;
  CUmodule module = nullptr;
  if (!scope.ok || !RPE_CU(cuModuleLoadData(&module, data)))
    return nullptr;
  return module;
}

RPE_EXPORT void *mgpuModuleLoadJIT(void *ptx, int32_t optLevel) {
  ScopedContext scope;
  if (!scope.ok)
    return nullptr;
  CUmodule module = nullptr;
  char log[8192] = {0};
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize,
                   kJitOptimizationLevel};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log)),
                    reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
  CUresult r = driver.cuModuleLoadDataEx(&module, ptx, 3, options, values);
  if (r != 0) {
    fail("cuModuleLoadDataEx (PTX JIT) failed: %s (%d): %s", errorName(r), r,
         log);
    return nullptr;
  }
  return module;
}

RPE_EXPORT void mgpuModuleUnload(void *module) {
  if (!module)
    return;
  ScopedContext scope;
  if (scope.ok)
    RPE_CU(cuModuleUnload(static_cast<CUmodule>(module)));
}

RPE_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  ScopedContext scope;
  if (!scope.ok)
    return nullptr;
  if (!module) {
    fail("mgpuModuleGetFunction(%s): the module was not loaded", name);
    return nullptr;
  }
  CUfunction function = nullptr;
  if (!RPE_CU(
          cuModuleGetFunction(&function, static_cast<CUmodule>(module), name)))
    return nullptr;
  return function;
}

RPE_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ, int32_t smem,
                                 void *stream, void **params, void **extra,
                                 size_t /*paramsCount*/) {
  ScopedContext scope;
  if (!scope.ok)
    return;
  if (!function) {
    fail("mgpuLaunchKernel: no kernel function");
    return;
  }
  auto f = static_cast<CUfunction>(function);
  if (smem > 0) {
    int maxOptin = 0;
    if (!RPE_CU(
            cuDeviceGetAttribute(&maxOptin, kDevMaxSharedOptin, driver.device)))
      return;
    if (smem > maxOptin) {
      fail("mgpuLaunchKernel: %d bytes of shared memory requested, the "
           "device allows %d",
           smem, maxOptin);
      return;
    }
    if (!RPE_CU(cuFuncSetAttribute(f, kFuncMaxDynamicShared, smem)))
      return;
  }
  RPE_CU(cuLaunchKernel(f, gridX, gridY, gridZ, blockX, blockY, blockZ, smem,
                        static_cast<CUstream>(stream), params, extra));
}

namespace {
/// The caller's stream for this thread (rpeCudaSetStream), or null.
thread_local CUstream userStream = nullptr;
} // namespace

/// Makes the calls of this thread run on `stream` (a CUstream of the
/// device's primary context; null: a stream of their own per launch, the
/// default): mgpuStreamCreate hands it out and mgpuStreamDestroy keeps it.
/// The compiled code still synchronizes it after each launch, so a call
/// returns when its work on `stream` (and what was queued before) is done.
RPE_EXPORT void rpeCudaSetStream(void *stream) {
  userStream = static_cast<CUstream>(stream);
}

/// The stream set by rpeCudaSetStream for this thread, or null.
RPE_EXPORT void *rpeCudaGetStream() { return userStream; }

RPE_EXPORT void *mgpuStreamCreate() {
  if (userStream)
    return userStream;
  ScopedContext scope;
  CUstream stream = nullptr;
  if (!scope.ok || !RPE_CU(cuStreamCreate(&stream, kStreamNonBlocking)))
    return nullptr;
  return stream;
}

RPE_EXPORT void mgpuStreamDestroy(void *stream) {
  if (!stream || stream == userStream)
    return;
  ScopedContext scope;
  if (scope.ok)
    RPE_CU(cuStreamDestroy_v2(static_cast<CUstream>(stream)));
}

RPE_EXPORT void mgpuStreamSynchronize(void *stream) {
  ScopedContext scope;
  if (scope.ok)
    RPE_CU(cuStreamSynchronize(static_cast<CUstream>(stream)));
}

RPE_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  ScopedContext scope;
  if (scope.ok)
    RPE_CU(cuStreamWaitEvent(static_cast<CUstream>(stream),
                             static_cast<CUevent>(event), 0));
}

RPE_EXPORT void *mgpuEventCreate() {
  ScopedContext scope;
  CUevent event = nullptr;
  if (!scope.ok || !RPE_CU(cuEventCreate(&event, 0)))
    return nullptr;
  return event;
}

RPE_EXPORT void mgpuEventDestroy(void *event) {
  if (!event)
    return;
  ScopedContext scope;
  if (scope.ok)
    RPE_CU(cuEventDestroy_v2(static_cast<CUevent>(event)));
}

RPE_EXPORT void mgpuEventSynchronize(void *event) {
  ScopedContext scope;
  if (scope.ok)
    RPE_CU(cuEventSynchronize(static_cast<CUevent>(event)));
}

RPE_EXPORT void mgpuEventRecord(void *event, void *stream) {
  ScopedContext scope;
  if (scope.ok)
    RPE_CU(cuEventRecord(static_cast<CUevent>(event),
                         static_cast<CUstream>(stream)));
}

RPE_EXPORT void *mgpuMemAlloc(uint64_t bytes, void * /*stream*/,
                              bool hostShared) {
  if (bytes == 0)
    return nullptr;
  ScopedContext scope;
  if (!scope.ok)
    return nullptr;
  CUdeviceptr ptr = 0;
  bool ok = hostShared
                ? RPE_CU(cuMemAllocManaged(&ptr, bytes, kMemAttachGlobal))
                : RPE_CU(cuMemAlloc_v2(&ptr, bytes));
  if (!ok)
    return nullptr;
  noteAllocation(reinterpret_cast<void *>(ptr), bytes);
  return reinterpret_cast<void *>(ptr);
}

RPE_EXPORT void mgpuMemFree(void *ptr, void * /*stream*/) {
  if (!ptr)
    return;
  ScopedContext scope;
  if (scope.ok && RPE_CU(cuMemFree_v2(reinterpret_cast<CUdeviceptr>(ptr))))
    noteFree(ptr);
}

RPE_EXPORT void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  if (bytes == 0)
    return;
  ScopedContext scope;
  if (scope.ok)
    RPE_CU(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                         reinterpret_cast<CUdeviceptr>(src), bytes,
                         static_cast<CUstream>(stream)));
}

RPE_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count,
                             void *stream) {
  if (count == 0)
    return;
  ScopedContext scope;
  if (scope.ok)
    RPE_CU(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                            static_cast<CUstream>(stream)));
}

RPE_EXPORT void mgpuMemset16(void *dst, unsigned short value, size_t count,
                             void *stream) {
  if (count == 0)
    return;
  ScopedContext scope;
  if (scope.ok)
    RPE_CU(cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                            static_cast<CUstream>(stream)));
}

namespace {
/// The byte size of the dense data a ranked memref descriptor
/// {allocated, aligned, offset, sizes[rank], strides[rank]} describes, and
/// its first element.
size_t denseBytes(int64_t rank, void *descriptor, int64_t elementBytes,
                  char **data) {
  auto *fields = static_cast<int64_t *>(descriptor);
  auto *aligned = reinterpret_cast<char *>(fields[1]);
  int64_t offset = fields[2];
  const int64_t *sizes = fields + 3;
  const int64_t *strides = sizes + rank;
  int64_t extent = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] == 0)
      return 0;
    extent += (sizes[d] - 1) * strides[d];
  }
  *data = aligned + offset * elementBytes;
  return static_cast<size_t>(extent * elementBytes);
}
} // namespace

RPE_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                          int64_t elementBytes) {
  char *data = nullptr;
  size_t bytes = denseBytes(rank, descriptor, elementBytes, &data);
  if (bytes == 0)
    return;
  ScopedContext scope;
  if (scope.ok)
    RPE_CU(cuMemHostRegister_v2(data, bytes, 0));
}

RPE_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                            int64_t elementBytes) {
  char *data = nullptr;
  if (denseBytes(rank, descriptor, elementBytes, &data) == 0)
    return;
  ScopedContext scope;
  if (scope.ok)
    RPE_CU(cuMemHostUnregister(data));
}
