/* libcuda.so of `tlpsim toolkit` (tlpsim's own source).
 *
 * Old Makefiles link `-lcuda` (the driver API) although their programs call only
 * the runtime API; this library lets them link and load. It defines no driver
 * function: a program that does call one (cuInit, cuCtxCreate, ...) fails to
 * link with `undefined reference to cuXxx`, which names the call tlpsim lacks.
 */
__attribute__((visibility("default"))) const char tlpsim_libcuda_stub[] =
    "tlpsim: link-time stand-in for libcuda; tlpsim's CUDA runtime needs no GPU driver";
