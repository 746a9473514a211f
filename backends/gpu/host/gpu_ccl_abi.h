/* The part of NCCL's C ABI the collective kernels call (gpu_ccl.c), under
 * our own names: NCCL's header (nccl.h, in the CUDA toolkit) includes
 * cuda_runtime.h and RCCL's (rccl/rccl.h) hip_runtime.h, so neither can be
 * included by the emulated GPU's build or by the fake library of the tests
 * (tests/fixtures/fake_nccl.c), and Debian's HIP has no RCCL header at all.
 * RCCL is NCCL's port and keeps its ABI: the same function names, enum
 * values and unique id. Where a vendor header is present (the CUDA build
 * here, a ROCm install with RCCL), gpu_ccl.c checks every value below
 * against it at compile time, so a wrong one cannot build there.
 *
 * Plain C, no GPU runtime: streams are opaque pointers (cudaStream_t and
 * hipStream_t are pointers to opaque structs). */
#ifndef MB_GPU_CCL_ABI_H
#define MB_GPU_CCL_ABI_H

#include <stddef.h>

/* ncclResult_t: 0 is ncclSuccess; any other value is an error that
 * ncclGetErrorString describes. Enums are passed as int by the C ABI. */
typedef int mb_ccl_result_t;
#define MB_CCL_SUCCESS 0
#define MB_CCL_INVALID_ARGUMENT 4 /* ncclInvalidArgument */
#define MB_CCL_INVALID_USAGE 5    /* ncclInvalidUsage */

/* ncclDataType_t: the four the collective ops take. */
typedef int mb_ccl_type_t;
#define MB_CCL_INT32 2    /* ncclInt32 */
#define MB_CCL_FLOAT16 6  /* ncclFloat16 */
#define MB_CCL_FLOAT32 7  /* ncclFloat32 */
#define MB_CCL_BFLOAT16 9 /* ncclBfloat16 (NCCL >= 2.10) */

/* ncclRedOp_t: the built-in reductions. */
typedef int mb_ccl_redop_t;
#define MB_CCL_SUM 0
#define MB_CCL_PROD 1
#define MB_CCL_MAX 2
#define MB_CCL_MIN 3

/* ncclComm_t: a pointer to the library's opaque communicator. */
typedef struct mb_ccl_comm *mb_ccl_comm_t;

/* ncclUniqueId: passed by value to ncclCommInitRank. */
#define MB_CCL_UNIQUE_ID_BYTES 128
typedef struct mb_ccl_unique_id {
  char internal[MB_CCL_UNIQUE_ID_BYTES];
} mb_ccl_unique_id_t;

#endif
