/* tlpsim's CUDA runtime library: a stand-in for NVIDIA's libcudart.so.13.
 *
 * A program built with `tlpsim nvcc` (shared cudart) loads this library instead of
 * NVIDIA's. It starts a Python interpreter inside the program (libpython is loaded
 * with dlopen on the first CUDA call), imports tlpsim.cudart.embedded, and forwards
 * every runtime call to it through one function pointer:
 *
 *     int dispatch(const char *name, uint64_t *args, int nargs)
 *
 * Arguments travel as 64-bit words (pointers, sizes, enums; a struct passed by value
 * travels as the address of the parameter) and the return value is the cudaError_t.
 * Host memory is the program's own, so Python reads and writes it in place.
 *
 * Only the launch-configuration stack (<<<...>>> push/pop) and a few pure functions
 * stay in C. Entry points tlpsim does not implement are generated at build time
 * (unsupported.c) and report themselves by name.
 *
 * Built by setup.py (tlpsim/cudart/build.py) with the system C compiler against the
 * CUDA headers of the pinned toolkit; TLPSIM_DEFAULT_PYTHON and TLPSIM_DEFAULT_LIBPYTHON
 * name the interpreter used when the program runs outside `tlpsim exec`.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include <cuda_runtime_api.h>

#include "libcudart_entry.h"

#ifndef TLPSIM_DEFAULT_PYTHON
#define TLPSIM_DEFAULT_PYTHON ""
#endif
#ifndef TLPSIM_DEFAULT_LIBPYTHON
#define TLPSIM_DEFAULT_LIBPYTHON ""
#endif


typedef int (*dispatch_fn)(const char *, uint64_t *, int);
static dispatch_fn dispatch_ptr;
static pthread_once_t started = PTHREAD_ONCE_INIT;

/* ------------------------------------------------------------------ the embedded interpreter */

static void fatal(const char *what, const char *detail)
{
    fprintf(stderr, "tlpsim: cannot start the CUDA runtime: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    fflush(stderr);
    _exit(86); /* `tlpsim exec` recognises this status */
}

static const char *setting(const char *env, const char *dflt)
{
    const char *v = getenv(env);
    return (v && *v) ? v : dflt;
}

/* Python calls these through ctypes (addresses passed to the bootstrap). */
static void set_dispatch(dispatch_fn f) { dispatch_ptr = f; }

static size_t write_stream(int fd, const char *buf, size_t n)
{
    /* the program's own stdio streams, so kernel printf output and the program's
       printf output keep their order */
    return fwrite(buf, 1, n, fd == 2 ? stderr : stdout);
}

static void at_exit(void)
{
    uint64_t none = 0;
    if (dispatch_ptr)
        dispatch_ptr("tlpsim_exit", &none, 0);
}

static void start_python(void)
{
    const char *libpython = setting("TLPSIM_LIBPYTHON", TLPSIM_DEFAULT_LIBPYTHON);
    const char *python = setting("TLPSIM_PYTHON", TLPSIM_DEFAULT_PYTHON);
    if (!*libpython)
        fatal("no Python library configured", "set TLPSIM_LIBPYTHON or run the program with `tlpsim exec`");
    void *lib = dlopen(libpython, RTLD_NOW | RTLD_GLOBAL); /* global: extension modules need its symbols */
    if (!lib)
        fatal("cannot load the Python library", dlerror());
    int (*is_initialized)(void) = (int (*)(void))dlsym(lib, "Py_IsInitialized");
    void (*initialize)(int) = (void (*)(int))dlsym(lib, "Py_InitializeEx");
    int (*run)(const char *, void *) = (int (*)(const char *, void *))dlsym(lib, "PyRun_SimpleStringFlags");
    void *(*save_thread)(void) = (void *(*)(void))dlsym(lib, "PyEval_SaveThread");
    int (*gil_ensure)(void) = (int (*)(void))dlsym(lib, "PyGILState_Ensure");
    void (*gil_release)(int) = (void (*)(int))dlsym(lib, "PyGILState_Release");
    void (*set_program_name)(const wchar_t *) = (void (*)(const wchar_t *))dlsym(lib, "Py_SetProgramName");
    if (!is_initialized || !initialize || !run || !save_thread || !gil_ensure || !gil_release)
        fatal("the Python library lacks the embedding API", libpython);
    int owner = !is_initialized();
    int gil = 0;
    if (owner) {
        if (*python && set_program_name) { /* so sys.path is the interpreter's (its venv) */
            static wchar_t wname[4096];
            if (mbstowcs(wname, python, 4095) != (size_t)-1)
                set_program_name(wname);
        }
        initialize(0); /* 0: leave the program's signal handlers alone */
    } else {
        gil = gil_ensure();
    }
    char code[1024];
    snprintf(code, sizeof code,
             "import os, sys\n"
             "sys.path[:0] = [p for p in os.environ.get('TLPSIM_SYS_PATH', '').split(os.pathsep)\n"
             "                if p and p not in sys.path]\n"
             "import tlpsim.cudart.embedded as _tlpsim_rt\n"
             "_tlpsim_rt.bootstrap(%llu, %llu)\n",
             (unsigned long long)P(set_dispatch), (unsigned long long)P(write_stream));
    if (run(code, NULL) != 0 || !dispatch_ptr)
        fatal("the Python runtime failed to start (its error is above)", NULL);
    atexit(at_exit);
    if (owner)
        save_thread(); /* the GIL is taken per call by the ctypes callbacks */
    else
        gil_release(gil);
}

static int call(const char *name, uint64_t *args, int nargs)
{
    pthread_once(&started, start_python);
    return dispatch_ptr(name, args, nargs);
}

#define CALL0(name)                    \
    do {                               \
        uint64_t a_ = 0;               \
        return (cudaError_t)call(name, &a_, 0); \
    } while (0)

/* The entry points of libcudart_*.c forward through this (hidden: not exported). */
int tlpsim_rt_call(const char *name, uint64_t *args, int nargs) { return call(name, args, nargs); }

/* Generated stubs call this for every entry point tlpsim does not implement. */
EXPORT int tlpsim_rt_unsupported(const char *name)
{
    uint64_t a[] = {P(name)};
    return call("tlpsim_unsupported", a, 1);
}

/* ------------------------------------------------------------------ registration (nvcc-generated code) */

EXPORT void **__cudaRegisterFatBinary(void *fatCubin)
{
    void **handle = calloc(1, sizeof(void *));
    *handle = fatCubin;
    uint64_t a[] = {P(fatCubin), P(handle)};
    call("__cudaRegisterFatBinary", a, 2);
    return handle;
}

EXPORT void __cudaRegisterFatBinaryEnd(void **fatCubinHandle) { (void)fatCubinHandle; }

EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle) { (void)fatCubinHandle; }

EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                                   int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
    (void)deviceFun; (void)thread_limit; (void)tid; (void)bid; (void)bDim; (void)gDim; (void)wSize;
    uint64_t a[] = {P(fatCubinHandle), P(hostFun), P(deviceName)};
    call("__cudaRegisterFunction", a, 3);
}

EXPORT void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName,
                              int ext, size_t size, int constant, int global)
{
    (void)deviceAddress;
    uint64_t a[] = {P(fatCubinHandle), P(hostVar), P(deviceName), (uint64_t)ext, size, (uint64_t)constant,
                    (uint64_t)global, 0};
    call("__cudaRegisterVar", a, 8);
}

EXPORT void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress,
                                     const char *deviceName, int ext, size_t size, int constant, int global)
{
    (void)deviceAddress;
    uint64_t a[] = {P(fatCubinHandle), P(hostVarPtrAddress), P(deviceName), (uint64_t)ext, size, (uint64_t)constant,
                    (uint64_t)global, 1};
    call("__cudaRegisterVar", a, 8);
}

EXPORT char __cudaInitModule(void **fatCubinHandle)
{
    (void)fatCubinHandle;
    return 1;
}

/* <<<grid, block, shared, stream>>> pushes a configuration that the kernel's host
   stub pops right away; a per-thread stack handles launches nested in arguments. */
struct launch_config { dim3 grid, block; size_t shared; void *stream; };
static __thread struct launch_config configs[16];
static __thread int n_configs;

EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st *stream)
{
    if (n_configs == 16)
        return 1;
    struct launch_config c = {gridDim, blockDim, sharedMem, stream};
    configs[n_configs++] = c;
    return 0;
}

EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream)
{
    if (n_configs == 0)
        return cudaErrorMissingConfiguration;
    struct launch_config c = configs[--n_configs];
    *gridDim = c.grid;
    *blockDim = c.block;
    *sharedMem = c.shared;
    *(void **)stream = c.stream;
    return cudaSuccess;
}

EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
    *kernel = (cudaKernel_t)hostFun; /* a kernel is named by its host stub */
    return cudaSuccess;
}

EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                      cudaStream_t stream)
{
    CALL("cudaLaunchKernel", P(kernel), P(&gridDim), P(&blockDim), P(args), sharedMem, P(stream));
}

EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                           size_t sharedMem, cudaStream_t stream)
{
    CALL("cudaLaunchKernel", P(kernel), P(&gridDim), P(&blockDim), P(args), sharedMem, P(stream));
}

EXPORT void __cudaRegisterHostVar(void **fatCubinHandle, const char *deviceName, char *hostVar, size_t size)
{
    (void)fatCubinHandle; (void)deviceName; (void)hostVar; (void)size;
    tlpsim_rt_unsupported("__cudaRegisterHostVar");
}

/* ------------------------------------------------------------------ device management */

EXPORT cudaError_t cudaGetDeviceCount(int *count) { CALL("cudaGetDeviceCount", P(count)); }
EXPORT cudaError_t cudaGetDevice(int *device) { CALL("cudaGetDevice", P(device)); }
EXPORT cudaError_t cudaSetDevice(int device) { CALL("cudaSetDevice", (uint64_t)device); }
EXPORT cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags)
{
    CALL("cudaSetDevice", (uint64_t)device, deviceFlags, flags);
}
EXPORT cudaError_t cudaChooseDevice(int *device, const struct cudaDeviceProp *prop)
{
    CALL("cudaChooseDevice", P(device), P(prop));
}
EXPORT cudaError_t cudaDeviceSynchronize(void) { CALL0("cudaDeviceSynchronize"); }
EXPORT cudaError_t cudaDeviceReset(void) { CALL0("cudaDeviceReset"); }
EXPORT cudaError_t cudaSetDeviceFlags(unsigned int flags) { CALL("cudaSetDeviceFlags", flags); }
EXPORT cudaError_t cudaGetDeviceFlags(unsigned int *flags) { CALL("cudaGetDeviceFlags", P(flags)); }
EXPORT cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value)
{
    CALL("cudaDeviceSetLimit", (uint64_t)limit, value);
}
EXPORT cudaError_t cudaDeviceGetLimit(size_t *value, enum cudaLimit limit)
{
    CALL("cudaDeviceGetLimit", P(value), (uint64_t)limit);
}
EXPORT cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache config) { CALL("tlpsim_accept", (uint64_t)config); }
EXPORT cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache *config)
{
    *config = cudaFuncCachePreferNone;
    CALL0("tlpsim_accept");
}
EXPORT cudaError_t cudaDeviceSetSharedMemConfig(enum cudaSharedMemConfig config)
{
    CALL("tlpsim_accept", (uint64_t)config);
}
EXPORT cudaError_t cudaDeviceGetSharedMemConfig(enum cudaSharedMemConfig *config)
{
    *config = cudaSharedMemBankSizeFourByte;
    CALL0("tlpsim_accept");
}
EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    if (leastPriority) *leastPriority = 0;
    if (greatestPriority) *greatestPriority = 0;
    CALL0("tlpsim_accept");
}
EXPORT cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
    CALL("cudaDeviceCanAccessPeer", P(canAccessPeer), (uint64_t)device, (uint64_t)peerDevice);
}
EXPORT cudaError_t cudaDriverGetVersion(int *driverVersion)
{
    *driverVersion = CUDART_VERSION;
    CALL0("tlpsim_accept");
}
EXPORT cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    *runtimeVersion = CUDART_VERSION;
    CALL0("tlpsim_accept");
}
EXPORT cudaError_t cudaProfilerStart(void) { CALL0("tlpsim_accept"); }
EXPORT cudaError_t cudaProfilerStop(void) { CALL0("tlpsim_accept"); }

/* Attributes travel by name (the enum's numbering stays in the header). */
static const struct { enum cudaDeviceAttr attr; const char *name; } attr_names[] = {
#define A(n) {cudaDevAttr##n, #n}
    A(MaxThreadsPerBlock), A(MaxBlockDimX), A(MaxBlockDimY), A(MaxBlockDimZ), A(MaxGridDimX), A(MaxGridDimY),
    A(MaxGridDimZ), A(MaxSharedMemoryPerBlock), A(TotalConstantMemory), A(WarpSize), A(MaxPitch),
    A(MaxRegistersPerBlock), A(ClockRate), A(TextureAlignment), A(MultiProcessorCount), A(KernelExecTimeout),
    A(Integrated), A(CanMapHostMemory), A(ComputeMode), A(ConcurrentKernels), A(EccEnabled), A(PciBusId),
    A(PciDeviceId), A(TccDriver), A(MemoryClockRate), A(GlobalMemoryBusWidth), A(L2CacheSize),
    A(MaxThreadsPerMultiProcessor), A(AsyncEngineCount), A(UnifiedAddressing), A(ComputeCapabilityMajor),
    A(ComputeCapabilityMinor), A(StreamPrioritiesSupported), A(GlobalL1CacheSupported), A(LocalL1CacheSupported),
    A(MaxSharedMemoryPerMultiprocessor), A(MaxRegistersPerMultiprocessor), A(ManagedMemory), A(IsMultiGpuBoard),
    A(MultiGpuBoardGroupID), A(HostNativeAtomicSupported), A(PageableMemoryAccess), A(ConcurrentManagedAccess),
    A(ComputePreemptionSupported), A(CanUseHostPointerForRegisteredMem), A(CooperativeLaunch),
    A(MaxSharedMemoryPerBlockOptin), A(DirectManagedMemAccessFromHost), A(MaxBlocksPerMultiprocessor),
    A(ReservedSharedMemoryPerBlock), A(MemoryPoolsSupported), A(PciDomainId), A(GPUDirectRDMASupported),
    A(HostRegisterSupported), A(MaxPersistingL2CacheSize), A(MaxAccessPolicyWindowSize),
    A(GpuOverlap), A(MaxTexture1DLinearWidth),
#undef A
};

static const char *attr_name(enum cudaDeviceAttr attr)
{
    for (size_t k = 0; k < sizeof attr_names / sizeof attr_names[0]; k++)
        if (attr_names[k].attr == attr)
            return attr_names[k].name;
    return NULL;
}

EXPORT cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    CALL("cudaDeviceGetAttribute", P(value), P(attr_name(attr)), (uint64_t)device, (uint64_t)attr);
}

static int attr_of(const char *name, int device)
{
    int v = 0;
    uint64_t a[] = {P(&v), P(name), (uint64_t)device, 0};
    call("cudaDeviceGetAttribute", a, 4);
    return v;
}

/* The fields CUDA 13 removed from cudaDeviceProp, in the first words of its reserved
 * array: the headers of `tlpsim toolkit` name them there (toolkit_dir.COMPAT_FIELDS, same
 * order), so programs written for CUDA 12 and older read them; CUDA 13 programs never
 * look at reserved words. singleToDoublePrecisionPerfRatio stays 0: the presets do not
 * state a double-precision throughput. */
static void compat_props(struct cudaDeviceProp *prop, int device)
{
    prop->reserved[0] = attr_of("ClockRate", device);
    prop->reserved[1] = attr_of("GpuOverlap", device);
    prop->reserved[2] = attr_of("KernelExecTimeout", device);
    prop->reserved[3] = attr_of("ComputeMode", device);
    prop->reserved[4] = attr_of("MaxTexture1DLinearWidth", device);
    prop->reserved[5] = attr_of("MemoryClockRate", device);
    prop->reserved[6] = 0; /* cooperativeMultiDeviceLaunch: one device */
    prop->reserved[7] = 0; /* singleToDoublePrecisionPerfRatio */
}

EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    uint64_t a[] = {P(prop->name), sizeof prop->name, (uint64_t)device, P(&prop->totalGlobalMem)};
    memset(prop, 0, sizeof *prop);
    cudaError_t err = (cudaError_t)call("tlpsim_device_identity", a, 4);
    if (err != cudaSuccess)
        return err;
#define F(field, attr) prop->field = attr_of(#attr, device)
    F(sharedMemPerBlock, MaxSharedMemoryPerBlock); F(regsPerBlock, MaxRegistersPerBlock); F(warpSize, WarpSize);
    F(memPitch, MaxPitch); F(maxThreadsPerBlock, MaxThreadsPerBlock);
    F(maxThreadsDim[0], MaxBlockDimX); F(maxThreadsDim[1], MaxBlockDimY); F(maxThreadsDim[2], MaxBlockDimZ);
    F(maxGridSize[0], MaxGridDimX); F(maxGridSize[1], MaxGridDimY); F(maxGridSize[2], MaxGridDimZ);
    F(totalConstMem, TotalConstantMemory); F(major, ComputeCapabilityMajor); F(minor, ComputeCapabilityMinor);
    F(textureAlignment, TextureAlignment); F(multiProcessorCount, MultiProcessorCount);
    F(integrated, Integrated); F(canMapHostMemory, CanMapHostMemory); F(concurrentKernels, ConcurrentKernels);
    F(ECCEnabled, EccEnabled); F(pciBusID, PciBusId); F(pciDeviceID, PciDeviceId); F(pciDomainID, PciDomainId);
    F(asyncEngineCount, AsyncEngineCount); F(unifiedAddressing, UnifiedAddressing);
    F(memoryBusWidth, GlobalMemoryBusWidth); F(l2CacheSize, L2CacheSize);
    F(maxThreadsPerMultiProcessor, MaxThreadsPerMultiProcessor);
    F(streamPrioritiesSupported, StreamPrioritiesSupported); F(globalL1CacheSupported, GlobalL1CacheSupported);
    F(localL1CacheSupported, LocalL1CacheSupported);
    F(sharedMemPerMultiprocessor, MaxSharedMemoryPerMultiprocessor);
    F(regsPerMultiprocessor, MaxRegistersPerMultiprocessor); F(managedMemory, ManagedMemory);
    F(hostNativeAtomicSupported, HostNativeAtomicSupported); F(pageableMemoryAccess, PageableMemoryAccess);
    F(concurrentManagedAccess, ConcurrentManagedAccess); F(cooperativeLaunch, CooperativeLaunch);
    F(sharedMemPerBlockOptin, MaxSharedMemoryPerBlockOptin);
    F(directManagedMemAccessFromHost, DirectManagedMemAccessFromHost);
    F(maxBlocksPerMultiProcessor, MaxBlocksPerMultiprocessor);
    F(reservedSharedMemPerBlock, ReservedSharedMemoryPerBlock); F(hostRegisterSupported, HostRegisterSupported);
#undef F
    compat_props(prop, device);
    return cudaSuccess;
}

/* ------------------------------------------------------------------ errors */

EXPORT cudaError_t cudaGetLastError(void) { CALL0("cudaGetLastError"); }
EXPORT cudaError_t cudaPeekAtLastError(void) { CALL0("cudaPeekAtLastError"); }

EXPORT const char *cudaGetErrorString(cudaError_t error)
{
    const char *text = "unrecognized error code";
    uint64_t a[] = {(uint64_t)error, P(&text), 0};
    call("tlpsim_error_text", a, 3);
    return text;
}

EXPORT const char *cudaGetErrorName(cudaError_t error)
{
    const char *text = "unrecognized error code";
    uint64_t a[] = {(uint64_t)error, P(&text), 1};
    call("tlpsim_error_text", a, 3);
    return text;
}

/* ------------------------------------------------------------------ memory */

EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size) { CALL("cudaMalloc", P(devPtr), size, 0); }
EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size) { CALL("cudaMalloc", P(ptr), size, 1); }
EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    CALL("cudaMalloc", P(pHost), size, 1, flags);
}
EXPORT cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    CALL("cudaMalloc", P(devPtr), size, 2, flags);
}
EXPORT cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream)
{
    CALL("cudaMalloc", P(devPtr), size, 0, 0, P(stream));
}
EXPORT cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
    CALL("cudaMallocPitch", P(devPtr), P(pitch), width, height);
}
EXPORT cudaError_t cudaFree(void *devPtr) { CALL("cudaFree", P(devPtr), 0); }
EXPORT cudaError_t cudaFreeHost(void *ptr) { CALL("cudaFree", P(ptr), 1); }
EXPORT cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream) { CALL("cudaFree", P(devPtr), 0, P(stream)); }
/* Memory pools (mempools.py): cudaMallocAsync allocates from the device's current pool;
 * cudaMallocFromPoolAsync names the pool (the fifth word of "cudaMalloc"). */
EXPORT cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
    CALL("cudaDeviceGetDefaultMemPool", P(memPool), (uint64_t)device);
}
EXPORT cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device)
{
    CALL("cudaDeviceGetMemPool", P(memPool), (uint64_t)device);
}
EXPORT cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool)
{
    CALL("cudaDeviceSetMemPool", (uint64_t)device, P(memPool));
}
EXPORT cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool, const struct cudaMemPoolProps *poolProps)
{
    CALL("cudaMemPoolCreate", P(memPool), P(poolProps));
}
EXPORT cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool) { CALL("cudaMemPoolDestroy", P(memPool)); }
EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{
    CALL("cudaMemPoolTrimTo", P(memPool), minBytesToKeep);
}
EXPORT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    CALL("cudaMemPoolSetAttribute", P(memPool), (uint64_t)attr, P(value));
}
EXPORT cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    CALL("cudaMemPoolGetAttribute", P(memPool), (uint64_t)attr, P(value));
}
EXPORT cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream)
{
    CALL("cudaMalloc", P(ptr), size, 0, 0, P(stream), P(memPool));
}
EXPORT cudaError_t cudaMemGetInfo(size_t *free, size_t *total) { CALL("cudaMemGetInfo", P(free), P(total)); }
EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    CALL("cudaHostRegister", P(ptr), size, flags);
}
EXPORT cudaError_t cudaHostUnregister(void *ptr) { CALL("tlpsim_accept", P(ptr)); }
EXPORT cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
    CALL("cudaHostGetDevicePointer", P(pDevice), P(pHost), flags);
}
EXPORT cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost)
{
    CALL("cudaHostGetFlags", P(pFlags), P(pHost));
}
EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
    int type = 0;
    uint64_t a[] = {P(&type), P(ptr)};
    cudaError_t err = (cudaError_t)call("cudaPointerGetAttributes", a, 2);
    memset(attributes, 0, sizeof *attributes);
    attributes->type = (enum cudaMemoryType)type;
    attributes->device = type == cudaMemoryTypeUnregistered ? -2 : 0;
    attributes->devicePointer = type == cudaMemoryTypeUnregistered ? NULL : (void *)ptr;
    attributes->hostPointer = (type == cudaMemoryTypeHost || type == cudaMemoryTypeManaged
                               || type == cudaMemoryTypeUnregistered) ? (void *)ptr : NULL;
    return err;
}
EXPORT cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count, struct cudaMemLocation location,
                                        unsigned int flags, cudaStream_t stream)
{
    (void)location; (void)flags; (void)stream;
    CALL("tlpsim_accept", P(devPtr), count);
}
EXPORT cudaError_t cudaMemAdvise(const void *devPtr, size_t count, enum cudaMemoryAdvise advice,
                                 struct cudaMemLocation location)
{
    (void)advice; (void)location;
    CALL("tlpsim_accept", P(devPtr), count);
}

/* ------------------------------------------------------------------ copies */

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    CALL("cudaMemcpy", P(dst), P(src), count, (uint64_t)kind, 0, 1);
}
EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                   cudaStream_t stream)
{
    CALL("cudaMemcpy", P(dst), P(src), count, (uint64_t)kind, P(stream), 0);
}
EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                                enum cudaMemcpyKind kind)
{
    CALL("cudaMemcpy2D", P(dst), dpitch, P(src), spitch, width, height, (uint64_t)kind, 0, 1);
}
EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                     size_t height, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    CALL("cudaMemcpy2D", P(dst), dpitch, P(src), spitch, width, height, (uint64_t)kind, P(stream), 0);
}
EXPORT cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    CALL("cudaMemset", P(devPtr), count, (uint64_t)(uint32_t)value, count, 1, 0, 1);
}
EXPORT cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    CALL("cudaMemsetAsync", P(devPtr), count, (uint64_t)(uint32_t)value, count, 1, P(stream), 0);
}
EXPORT cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
    CALL("cudaMemset2D", P(devPtr), pitch, (uint64_t)(uint32_t)value, width, height, 0, 1);
}
EXPORT cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                                     cudaStream_t stream)
{
    CALL("cudaMemset2DAsync", P(devPtr), pitch, (uint64_t)(uint32_t)value, width, height, P(stream), 0);
}
EXPORT cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind)
{
    CALL("cudaMemcpySymbol", P(symbol), P(src), count, offset, (uint64_t)kind, 0, 1, 1);
}
EXPORT cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                        enum cudaMemcpyKind kind)
{
    CALL("cudaMemcpySymbol", P(symbol), P(dst), count, offset, (uint64_t)kind, 0, 1, 0);
}
EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset,
                                           enum cudaMemcpyKind kind, cudaStream_t stream)
{
    CALL("cudaMemcpySymbol", P(symbol), P(src), count, offset, (uint64_t)kind, P(stream), 0, 1);
}
EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
                                             enum cudaMemcpyKind kind, cudaStream_t stream)
{
    CALL("cudaMemcpySymbol", P(symbol), P(dst), count, offset, (uint64_t)kind, P(stream), 0, 0);
}
EXPORT cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
    CALL("cudaGetSymbolAddress", P(devPtr), P(symbol), 0);
}
EXPORT cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
    CALL("cudaGetSymbolAddress", P(size), P(symbol), 1);
}

/* ------------------------------------------------------------------ kernels */

EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                    cudaStream_t stream)
{
    CALL("cudaLaunchKernel", P(func), P(&gridDim), P(&blockDim), P(args), sharedMem, P(stream));
}

EXPORT cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    int64_t v[9] = {0};
    uint64_t a[] = {P(func), P(v)};
    cudaError_t err = (cudaError_t)call("cudaFuncGetAttributes", a, 2);
    if (err != cudaSuccess)
        return err;
    memset(attr, 0, sizeof *attr);
    attr->sharedSizeBytes = (size_t)v[0];
    attr->constSizeBytes = (size_t)v[1];
    attr->localSizeBytes = (size_t)v[2];
    attr->maxThreadsPerBlock = (int)v[3];
    attr->numRegs = (int)v[4];
    attr->ptxVersion = (int)v[5];
    attr->binaryVersion = (int)v[6];
    attr->maxDynamicSharedSizeBytes = (int)v[7];
    attr->preferredShmemCarveout = (int)v[8];
    return cudaSuccess;
}
EXPORT cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    CALL("cudaFuncSetAttribute", P(func), (uint64_t)attr, (uint64_t)(int64_t)value,
         attr == cudaFuncAttributeMaxDynamicSharedMemorySize);
}
EXPORT cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache cacheConfig)
{
    CALL("cudaFuncSetAttribute", P(func), (uint64_t)cacheConfig, 0, 0);
}
EXPORT cudaError_t cudaFuncSetSharedMemConfig(const void *func, enum cudaSharedMemConfig config)
{
    CALL("cudaFuncSetAttribute", P(func), (uint64_t)config, 0, 0);
}
EXPORT cudaError_t cudaFuncGetName(const char **name, const void *func) { CALL("cudaFuncGetName", P(name), P(func)); }
EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize,
                                                                 size_t dynamicSMemSize)
{
    CALL("cudaOccupancyMaxActiveBlocksPerMultiprocessor", P(numBlocks), P(func), (uint64_t)blockSize,
         dynamicSMemSize);
}
EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func,
                                                                          int blockSize, size_t dynamicSMemSize,
                                                                          unsigned int flags)
{
    (void)flags;
    CALL("cudaOccupancyMaxActiveBlocksPerMultiprocessor", P(numBlocks), P(func), (uint64_t)blockSize,
         dynamicSMemSize);
}
EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    CALL("cudaLaunchHostFunc", P(stream), P(fn), P(userData));
}

/* ------------------------------------------------------------------ streams and events */

EXPORT cudaError_t cudaStreamCreate(cudaStream_t *pStream) { CALL("cudaStreamCreate", P(pStream), 0, 0); }
EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    CALL("cudaStreamCreate", P(pStream), flags, 0);
}
EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority)
{
    CALL("cudaStreamCreate", P(pStream), flags, (uint64_t)(int64_t)priority);
}
EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream) { CALL("cudaStreamDestroy", P(stream)); }
EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream) { CALL("cudaStreamSynchronize", P(stream)); }
EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream) { CALL("cudaStreamQuery", P(stream)); }
EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    CALL("cudaStreamWaitEvent", P(stream), P(event), flags);
}
EXPORT cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int *flags)
{
    CALL("cudaStreamGetFlags", P(hStream), P(flags), 0);
}
EXPORT cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority)
{
    CALL("cudaStreamGetFlags", P(hStream), P(priority), 1);
}
EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *userData,
                                         unsigned int flags)
{
    (void)flags;
    CALL("cudaStreamAddCallback", P(stream), P(callback), P(userData));
}

EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event) { CALL("cudaEventCreate", P(event), 0); }
EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    CALL("cudaEventCreate", P(event), flags);
}
EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    CALL("cudaEventRecord", P(event), P(stream));
}
EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
    (void)flags;
    CALL("cudaEventRecord", P(event), P(stream));
}
EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event) { CALL("cudaEventSynchronize", P(event)); }
EXPORT cudaError_t cudaEventQuery(cudaEvent_t event) { CALL("cudaEventQuery", P(event)); }
EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event) { CALL("cudaEventDestroy", P(event)); }
EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    CALL("cudaEventElapsedTime", P(ms), P(start), P(end));
}

/* ------------------------------------------------------------------ pure functions */

EXPORT struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, enum cudaChannelFormatKind f)
{
    struct cudaChannelFormatDesc d = {x, y, z, w, f};
    return d;
}

/* ------------------------------------------------------------------ per-thread default stream variants */

ALIAS(cudaLaunchKernel_ptsz, cudaLaunchKernel);
ALIAS(cudaMemcpy_ptds, cudaMemcpy);
ALIAS(cudaMemcpyAsync_ptsz, cudaMemcpyAsync);
ALIAS(cudaMemcpy2D_ptds, cudaMemcpy2D);
ALIAS(cudaMemcpy2DAsync_ptsz, cudaMemcpy2DAsync);
ALIAS(cudaMemset_ptds, cudaMemset);
ALIAS(cudaMemsetAsync_ptsz, cudaMemsetAsync);
ALIAS(cudaMemset2D_ptds, cudaMemset2D);
ALIAS(cudaMemset2DAsync_ptsz, cudaMemset2DAsync);
ALIAS(cudaMemcpyToSymbol_ptds, cudaMemcpyToSymbol);
ALIAS(cudaMemcpyFromSymbol_ptds, cudaMemcpyFromSymbol);
ALIAS(cudaMemcpyToSymbolAsync_ptsz, cudaMemcpyToSymbolAsync);
ALIAS(cudaMemcpyFromSymbolAsync_ptsz, cudaMemcpyFromSymbolAsync);
ALIAS(cudaMallocAsync_ptsz, cudaMallocAsync);
ALIAS(cudaFreeAsync_ptsz, cudaFreeAsync);
ALIAS(cudaMallocFromPoolAsync_ptsz, cudaMallocFromPoolAsync);
ALIAS(cudaMemPrefetchAsync_ptsz, cudaMemPrefetchAsync);
ALIAS(cudaLaunchHostFunc_ptsz, cudaLaunchHostFunc);
ALIAS(cudaStreamSynchronize_ptsz, cudaStreamSynchronize);
ALIAS(cudaStreamQuery_ptsz, cudaStreamQuery);
ALIAS(cudaStreamWaitEvent_ptsz, cudaStreamWaitEvent);
ALIAS(cudaStreamGetFlags_ptsz, cudaStreamGetFlags);
ALIAS(cudaStreamGetPriority_ptsz, cudaStreamGetPriority);
ALIAS(cudaStreamAddCallback_ptsz, cudaStreamAddCallback);
ALIAS(cudaEventRecord_ptsz, cudaEventRecord);
ALIAS(cudaEventRecordWithFlags_ptsz, cudaEventRecordWithFlags);
