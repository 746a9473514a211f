/* CUDA backend — gemm_sparse24 on cuSPARSELt (2:4 sparse tensor cores),
 * loaded at run time by soname as cuBLASLt is (cuda_lt_load.c), through
 * the GPU host layer's loader. The toolkit ships no cusparseLt.h (it is a
 * separate download), so the few types and entry points used here are
 * declared from cuSPARSELt's documented ABI (docs.nvidia.com/cuda/
 * cusparselt, types and functions): its opaque structs are 1024 bytes,
 * held here in 4096 so a later, larger one still fits; the enums are those
 * of cuSPARSELt 0.6 and later (cusparseComputeType 32I = 0, 16F = 1,
 * 32F = 2: earlier versions numbered them otherwise, so a library older
 * than 0.6 is not loaded, saying why). cusparse.h (in the toolkit) gives
 * cusparseStatus_t, cusparseOrder_t and cusparseOperation_t.
 *
 * D[M,N] = X[M,K] . W[K,N] with W the structured operand B (2:4 along K,
 * row-major). prepare (untimed) rebuilds the dense pruned W from the op's
 * values and metadata on the host, uploads it and has cuSPARSELt compress
 * it into its own layout; run is one cusparseLtMatmul with f32 compute.
 * Not run here: no GPU was available when this was written (it builds). */
#include <cusparse.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "cuda_sparselt.h"
#include "gpu_host_dlopen.h"

#ifndef MB_CUDA_LIBRARY_DIR
#define MB_CUDA_LIBRARY_DIR "/usr/local/cuda/lib64"
#endif

/* ---- cuSPARSELt's ABI (not in the toolkit: declared here) --------------- */

typedef struct {
  _Alignas(16) unsigned char data[4096];
} splt_opaque_t;
enum { SPLT_SPARSITY_50_PERCENT = 0, SPLT_MATMUL_ALG_DEFAULT = 0 };
enum { SPLT_COMPUTE_32F = 2 };

typedef const splt_opaque_t *H; /* handle */
typedef splt_opaque_t *O;       /* descriptor, selection, plan */
struct mb_cuda_splt {
  void *dl; /* first: the loader's */
  cusparseStatus_t (*init)(O);
  cusparseStatus_t (*destroy)(H);
  cusparseStatus_t (*get_property)(libraryPropertyType, int *);
  const char *(*error_string)(cusparseStatus_t);
  cusparseStatus_t (*dense_init)(H, O, int64_t, int64_t, int64_t, uint32_t,
                                 cudaDataType, cusparseOrder_t);
  cusparseStatus_t (*structured_init)(H, O, int64_t, int64_t, int64_t, uint32_t,
                                      cudaDataType, cusparseOrder_t, int);
  cusparseStatus_t (*mat_destroy)(H);
  cusparseStatus_t (*matmul_init)(H, O, cusparseOperation_t,
                                  cusparseOperation_t, H, H, H, H, int);
  cusparseStatus_t (*alg_init)(H, O, H, int);
  cusparseStatus_t (*plan_init)(H, O, H, H);
  cusparseStatus_t (*plan_destroy)(H);
  cusparseStatus_t (*workspace)(H, H, size_t *);
  cusparseStatus_t (*compressed_size)(H, H, size_t *, size_t *);
  cusparseStatus_t (*compress)(H, H, const void *, void *, void *,
                               cudaStream_t);
  cusparseStatus_t (*matmul)(H, H, const void *, const void *, const void *,
                             const void *, const void *, void *, void *,
                             cudaStream_t *, int32_t);
  int major, minor, patch; /* cusparseLtGetProperty */
  char version_text[48];
};

#define SYM(name, field) \
  { name, offsetof(mb_cuda_splt_t, field) }
static const mb_gpuh_sym_t k_syms[] = {
    SYM("cusparseLtInit", init),
    SYM("cusparseLtDestroy", destroy),
    SYM("cusparseLtGetProperty", get_property),
    SYM("cusparseLtGetErrorString", error_string),
    SYM("cusparseLtDenseDescriptorInit", dense_init),
    SYM("cusparseLtStructuredDescriptorInit", structured_init),
    SYM("cusparseLtMatDescriptorDestroy", mat_destroy),
    SYM("cusparseLtMatmulDescriptorInit", matmul_init),
    SYM("cusparseLtMatmulAlgSelectionInit", alg_init),
    SYM("cusparseLtMatmulPlanInit", plan_init),
    SYM("cusparseLtMatmulPlanDestroy", plan_destroy),
    SYM("cusparseLtMatmulGetWorkspace", workspace),
    SYM("cusparseLtSpMMACompressedSize", compressed_size),
    SYM("cusparseLtSpMMACompress", compress),
    SYM("cusparseLtMatmul", matmul),
};
#undef SYM

static const char *const k_files[] = {
    "libcusparseLt.so.0", MB_CUDA_LIBRARY_DIR "/libcusparseLt.so.0"};

mb_cuda_splt_t *mb__cuda_splt_open(char *why, size_t cap) {
  static const mb_gpuh_lib_t spec = MB_GPUH_LIB(
      "cuSPARSELt", "MB_CUSPARSELT_LIBRARY", k_files, k_syms, mb_cuda_splt_t);
  mb_cuda_splt_t *s = mb__gpuh_load(&spec, NULL, NULL, 0, why, cap);
  if (!s) return NULL;
  int v[3] = {0, 0, 0};
  const libraryPropertyType k_props[3] = {MAJOR_VERSION, MINOR_VERSION,
                                          PATCH_LEVEL};
  for (int i = 0; i < 3; i++)
    if (s->get_property(k_props[i], &v[i]) != CUSPARSE_STATUS_SUCCESS) v[i] = 0;
  if (v[0] == 0 && v[1] < 6) {
    snprintf(why, cap,
             "cuSPARSELt %d.%d.%d is older than 0.6, whose enum values this "
             "module declares; set MB_CUSPARSELT_LIBRARY to 0.6 or later",
             v[0], v[1], v[2]);
    mb__cuda_splt_close(s);
    return NULL;
  }
  s->major = v[0], s->minor = v[1], s->patch = v[2];
  snprintf(s->version_text, sizeof s->version_text, "cuSPARSELt %d.%d.%d", v[0],
           v[1], v[2]);
  return s;
}

void mb__cuda_splt_close(mb_cuda_splt_t *s) {
  if (!s) return;
  dlclose(s->dl);
  free(s);
}

const char *mb__cuda_splt_version(const mb_cuda_splt_t *s) {
  return s->version_text;
}

mb_status_t mb__cuda_splt_device_open(mb_cuda_state_t *st,
                                      mb_cuda_device_t *d) {
  d->splt = NULL;
  if (!st->splt) return MB_OK; /* the kernel declines, saying why */
  splt_opaque_t *h = malloc(sizeof *h);
  if (h && st->splt->init(h) == CUSPARSE_STATUS_SUCCESS) {
    d->splt = h;
    return MB_OK;
  }
  free(h);
  MB_CUDA_LOG(st, MB_LOG_WARN, "cuda: cuSPARSELt: no handle on device %d",
              d->base.ordinal);
  return MB_OK;
}

void mb__cuda_splt_device_close(mb_cuda_state_t *st, mb_cuda_device_t *d) {
  if (d->splt) st->splt->destroy(d->splt);
  free(d->splt);
  d->splt = NULL;
}

/* ---- the kernel -----------------------------------------------------------
 */

mb_status_t mb__cuda_splt_supports(void *bstate, uint32_t dev,
                                   const mb_op_params_t *p, const char **why) {
  mb_cuda_state_t *st = bstate;
  mb_cuda_device_t *d =
      st && dev < st->base.num_devices ? mb__cuda_device(st, dev) : NULL;
  const char *no = NULL;
  char buf[480];
  if (!d)
    no = "cusparselt: no such CUDA device";
  else if (!st->splt) {
    snprintf(buf, sizeof buf, "cuSPARSELt not loaded: %s", st->splt_why);
    no = buf;
  } else if (!d->splt)
    no = "cuSPARSELt: no handle on this device";
  else if (d->cc_major < 8)
    no = "cuSPARSELt: sparse tensor cores need compute capability 8.0";
  else if (p->dtype == MB_DTYPE_F32)
    no = "cuSPARSELt takes f32 as 1:2 (tf32), not 2:4: bf16 and f16 only";
  else if (p->shape[0] % 16 || p->shape[1] % 16 || p->shape[2] % 16)
    no = "cuSPARSELt: M, K and N must be multiples of 16";
  if (no && why)
    *why = st ? st->base.host.reason(st->base.host.host, "%s", no) : no;
  return no ? MB_ERR_UNSUPPORTED : MB_OK;
}

typedef struct splt_kernel {
  mb_cuda_state_t *st;
  mb_cuda_device_t *d;
  splt_opaque_t a, b, c, mm, alg, plan;
  int have_plan;
  void *compressed, *workspace;
} splt_kernel_t;

static mb_status_t ck(splt_kernel_t *k, cusparseStatus_t s, const char *what) {
  if (s == CUSPARSE_STATUS_SUCCESS) return MB_OK;
  k->st->base.host.set_error("cuda: cuSPARSELt: %s: %s", what,
                             k->st->splt->error_string(s));
  return s == CUSPARSE_STATUS_NOT_SUPPORTED ? MB_ERR_UNSUPPORTED
                                            : MB_ERR_BACKEND;
}

/* W[K,N] (2-byte elements) from the op's values and metadata, zeros where
 * pruned (lib/ops/sparse.h: rows 2g, 2g + 1 of the values at 4g + i0,
 * 4g + i1). */
static void decompress(const uint16_t *v, const uint8_t *meta, int64_t k,
                       int64_t n, uint16_t *w) {
  memset(w, 0, (size_t)(k * n) * sizeof *w);
  for (int64_t g = 0; g < k / 4; g++)
    for (int64_t c = 0; c < n; c++) {
      const unsigned nib = (meta[g / 2 * n + c] >> (4 * (g & 1))) & 15u;
      w[(4 * g + (nib & 3u)) * n + c] = v[2 * g * n + c];
      w[(4 * g + (nib >> 2)) * n + c] = v[(2 * g + 1) * n + c];
    }
}

static mb_status_t plan(splt_kernel_t *k, const mb_op_params_t *p) {
  const mb_cuda_splt_t *l = k->st->splt;
  const H h = k->d->splt;
  const int64_t m = p->shape[0], kk = p->shape[1], n = p->shape[2];
  const cudaDataType t = p->dtype == MB_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_16F;
  const cusparseOrder_t row = CUSPARSE_ORDER_ROW;
  const cusparseOperation_t nt = CUSPARSE_OPERATION_NON_TRANSPOSE;
  mb_status_t s = ck(k, l->dense_init(h, &k->a, m, kk, kk, 16, t, row),
                     "dense descriptor of A");
  if (s == MB_OK)
    s = ck(k,
           l->structured_init(h, &k->b, kk, n, n, 16, t, row,
                              SPLT_SPARSITY_50_PERCENT),
           "structured descriptor of W");
  if (s == MB_OK)
    s = ck(k, l->dense_init(h, &k->c, m, n, n, 16, t, row),
           "dense descriptor of D");
  if (s == MB_OK)
    s = ck(k,
           l->matmul_init(h, &k->mm, nt, nt, &k->a, &k->b, &k->c, &k->c,
                          SPLT_COMPUTE_32F),
           "matmul descriptor");
  if (s == MB_OK)
    s = ck(k, l->alg_init(h, &k->alg, &k->mm, SPLT_MATMUL_ALG_DEFAULT),
           "algorithm selection");
  if (s == MB_OK) s = ck(k, l->plan_init(h, &k->plan, &k->mm, &k->alg), "plan");
  k->have_plan = s == MB_OK;
  return s;
}

/* Compresses W, rebuilt from the call's values and metadata, into
 * cuSPARSELt's layout (untimed). */
static mb_status_t compress(splt_kernel_t *k, const mb_kernel_call_t *call) {
  const mb_op_params_t *p = call->params;
  const int64_t kk = p->shape[1], n = p->shape[2];
  const size_t nv = (size_t)(kk / 2 * n), nm = (size_t)(kk / 8 * n);
  const size_t nw = (size_t)(kk * n);
  const cudaStream_t stream = k->d->base.stream;
  uint16_t *hv = malloc(nv * 2), *hw = malloc(nw * 2);
  uint8_t *hm = malloc(nm);
  void *dw = NULL, *buf = NULL;
  size_t csize = 0, bsize = 0, ws = 0;
  mb_status_t s = hv && hw && hm ? MB_OK : MB_ERR_NO_MEMORY;
  if (s != MB_OK) k->st->base.host.set_error("cuda: cuSPARSELt: no memory");
  if (s == MB_OK)
    s = mb__cuda_check(k->st,
                       cudaMemcpy(hv, call->in[1], nv * 2, cudaMemcpyDefault),
                       "read the values");
  if (s == MB_OK)
    s = mb__cuda_check(k->st,
                       cudaMemcpy(hm, call->in[2], nm, cudaMemcpyDefault),
                       "read the metadata");
  if (s == MB_OK) {
    decompress(hv, hm, kk, n, hw);
    s = mb__cuda_check(k->st, cudaMalloc(&dw, nw * 2), "dense W");
  }
  if (s == MB_OK)
    s = mb__cuda_check(k->st, cudaMemcpy(dw, hw, nw * 2, cudaMemcpyDefault),
                       "upload W");
  const mb_cuda_splt_t *l = k->st->splt;
  if (s == MB_OK)
    s = ck(k, l->compressed_size(k->d->splt, &k->plan, &csize, &bsize),
           "compressed size");
  if (s == MB_OK)
    s = ck(k, l->workspace(k->d->splt, &k->plan, &ws), "workspace size");
  if (s == MB_OK)
    s = mb__cuda_check(k->st, cudaMalloc(&k->compressed, csize ? csize : 1),
                       "compressed W");
  if (s == MB_OK && bsize)
    s = mb__cuda_check(k->st, cudaMalloc(&buf, bsize), "compress buffer");
  if (s == MB_OK)
    s = mb__cuda_check(k->st, cudaMalloc(&k->workspace, ws ? ws : 1),
                       "workspace");
  if (s == MB_OK)
    s = ck(k, l->compress(k->d->splt, &k->plan, dw, k->compressed, buf, stream),
           "compress W");
  if (s == MB_OK)
    s = mb__cuda_check(k->st, cudaStreamSynchronize(stream), "compress W");
  cudaFree(dw);
  cudaFree(buf);
  free(hv);
  free(hw);
  free(hm);
  return s;
}

void mb__cuda_splt_release(void *kstate) {
  splt_kernel_t *k = kstate;
  if (!k) return;
  if (k->have_plan) {
    cudaStreamSynchronize(k->d->base.stream); /* nothing queued uses them */
    k->st->splt->plan_destroy(&k->plan);
    k->st->splt->mat_destroy(&k->a);
    k->st->splt->mat_destroy(&k->b);
    k->st->splt->mat_destroy(&k->c);
  }
  cudaFree(k->compressed);
  cudaFree(k->workspace);
  free(k);
}

mb_status_t mb__cuda_splt_prepare(void *bstate, const mb_kernel_call_t *call,
                                  void **kstate) {
  mb_cuda_state_t *st = bstate;
  *kstate = NULL;
  const char *why = NULL;
  if (mb__cuda_splt_supports(bstate, call->device, call->params, &why) !=
      MB_OK) {
    st->base.host.set_error("%s", why);
    return MB_ERR_UNSUPPORTED;
  }
  /* W is compressed once, here: values written inside the timed run (none
   * of our graphs does) cannot be. */
  if (MB_CALL_VARYING_IN(call) & 6u) {
    st->base.host.set_error(
        "cuda: cuSPARSELt: W changes inside the timed run; it is compressed "
        "once, in prepare");
    return MB_ERR_UNSUPPORTED;
  }
  splt_kernel_t *k = calloc(1, sizeof *k);
  if (!k) {
    st->base.host.set_error("cuda: cuSPARSELt: out of host memory");
    return MB_ERR_NO_MEMORY;
  }
  k->st = st;
  k->d = mb__cuda_device(st, call->device);
  mb_status_t s = plan(k, call->params);
  if (s == MB_OK) s = compress(k, call);
  if (s != MB_OK) {
    mb__cuda_splt_release(k);
    return s;
  }
  *kstate = k;
  return MB_OK;
}

mb_status_t mb__cuda_splt_run(void *kstate, const mb_kernel_call_t *call) {
  splt_kernel_t *k = kstate;
  const float alpha = 1.0f, beta = 0.0f;
  cudaStream_t stream = k->d->base.stream;
  return ck(k,
            k->st->splt->matmul(k->d->splt, &k->plan, &alpha, call->in[0],
                                k->compressed, &beta, call->out[0],
                                call->out[0], k->workspace, &stream, 1),
            "matmul");
}
