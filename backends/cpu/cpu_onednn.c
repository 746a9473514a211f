/* CPU backend — oneDNN engine, stream, version, and the shared kernel that
 * runs one primitive over the caller's buffers. */
#include "cpu_onednn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct onednn_kernel {
  mb_cpu_state_t *st;
  char what[48];
  dnnl_primitive_t prim;
  int nmem;
  dnnl_memory_t mem[MB_CPU_ONEDNN_MAX_OPERANDS];
  int operand[MB_CPU_ONEDNN_MAX_OPERANDS]; /* the call's operand each wraps */
  void *bound[MB_CPU_ONEDNN_MAX_OPERANDS]; /* the buffer it points at now */
  dnnl_memory_t scratch; /* NULL when the primitive needs none */
  dnnl_exec_arg_t args[MB_CPU_ONEDNN_MAX_OPERANDS + 1]; /* + scratchpad */
  int nargs;
} onednn_kernel_t;

static const struct {
  mb_dtype_t ours;
  dnnl_data_type_t theirs;
} dtype_map[] = {
    {MB_DTYPE_F32, dnnl_f32}, {MB_DTYPE_BF16, dnnl_bf16},
    {MB_DTYPE_F16, dnnl_f16}, {MB_DTYPE_I8, dnnl_s8},
    {MB_DTYPE_I32, dnnl_s32},
};

void mb__cpu_onednn_init(mb_cpu_state_t *st) {
  dnnl_status_t s = dnnl_engine_create(&st->engine, dnnl_cpu, 0);
  if (s == dnnl_success)
    s = dnnl_stream_create(&st->stream, st->engine, dnnl_stream_default_flags);
  if (s != dnnl_success) {
    snprintf(st->onednn_why, sizeof st->onednn_why,
             "cpu: oneDNN cpu engine/stream creation failed: %s",
             dnnl_status2str(s));
    mb__cpu_onednn_fini(st);
  }
}

void mb__cpu_onednn_fini(mb_cpu_state_t *st) {
  if (st->stream) dnnl_stream_destroy(st->stream);
  if (st->engine) dnnl_engine_destroy(st->engine);
  st->stream = NULL;
  st->engine = NULL;
}

void mb__cpu_onednn_version(char *buf, size_t size) {
  const dnnl_version_t *v = dnnl_version();
  const char *isa = dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa());
  /* "cpu_isa_avx512_core_bf16" -> "avx512_core_bf16" */
  if (strncmp(isa, "cpu_isa_", 8) == 0) isa += 8;
  snprintf(buf, size, "oneDNN %d.%d.%d (cpu runtime %s, isa %s)", v->major,
           v->minor, v->patch, dnnl_runtime2str(v->cpu_runtime), isa);
}

mb_status_t mb__cpu_onednn_check(mb_cpu_state_t *st, const char *what) {
  if (st->engine) return MB_OK;
  MB_CPU_ERROR(st, "cpu/onednn: %s: %s", what, st->onednn_why);
  return MB_ERR_UNSUPPORTED;
}

mb_status_t mb__cpu_onednn_desc(mb_cpu_state_t *st, const char *what,
                                const char *kind, dnnl_status_t s) {
  if (s == dnnl_success) return MB_OK;
  MB_CPU_ERROR(st, "cpu/onednn: %s: %s descriptor: %s", what, kind,
               dnnl_status2str(s));
  return MB_ERR_UNSUPPORTED;
}

mb_status_t mb__cpu_onednn_md_2d(mb_cpu_state_t *st, const char *what,
                                 dnnl_memory_desc_t *md, int64_t rows,
                                 int64_t cols, mb_dtype_t dtype) {
  return mb__cpu_onednn_md_2d_stored(st, what, md, rows, cols, dtype, 0);
}

mb_status_t mb__cpu_onednn_md_2d_stored(mb_cpu_state_t *st, const char *what,
                                        dnnl_memory_desc_t *md, int64_t rows,
                                        int64_t cols, mb_dtype_t dtype,
                                        int transposed) {
  for (size_t i = 0; i < sizeof dtype_map / sizeof dtype_map[0]; ++i) {
    if (dtype_map[i].ours != dtype) continue;
    const dnnl_dims_t dims = {rows, cols};
    const dnnl_status_t s = dnnl_memory_desc_init_by_tag(
        md, 2, dims, dtype_map[i].theirs, transposed ? dnnl_ba : dnnl_ab);
    if (s == dnnl_success) return MB_OK;
    MB_CPU_ERROR(st, "cpu/onednn: %s: %lldx%lld%s memory descriptor: %s", what,
                 (long long)rows, (long long)cols,
                 transposed ? " (transposed)" : "", dnnl_status2str(s));
    return MB_ERR_BACKEND;
  }
  MB_CPU_ERROR(st, "cpu/onednn: %s: dtype %s has no oneDNN equivalent", what,
               st->host.dtype_name(dtype));
  return MB_ERR_UNSUPPORTED;
}

/* The call's buffer for operand i (mb_cpu_onednn_operands_t). */
static void *operand_ptr(const mb_kernel_call_t *call, int i) {
  return i >= 0 ? call->in[i] : call->out[-1 - i];
}

void mb__cpu_onednn_release(void *kstate) {
  onednn_kernel_t *k = kstate;
  if (!k) return;
  for (int i = 0; i < k->nmem; ++i)
    if (k->mem[i]) dnnl_memory_destroy(k->mem[i]);
  if (k->scratch) dnnl_memory_destroy(k->scratch);
  if (k->prim) dnnl_primitive_destroy(k->prim);
  free(k);
}

/* Says which implementation oneDNN picked: a "ref" one is a slow loop nest,
 * worth a warning since the numbers will look like a bug. */
static void log_impl(mb_cpu_state_t *st, const char *what,
                     const_dnnl_primitive_desc_t pd) {
  const char *impl = NULL;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) !=
          dnnl_success ||
      !impl)
    return;
  const int ref = strncmp(impl, "ref", 3) == 0;
  MB_CPU_LOG(st, ref ? MB_LOG_WARN : MB_LOG_DEBUG,
             "cpu/onednn: %s uses oneDNN implementation %s%s", what, impl,
             ref ? " (reference: slow)" : "");
}

/* The scratchpad is ours ("user" mode) and allocated here: otherwise oneDNN
 * may allocate it inside the timed execute, or share a global one. */
static mb_status_t build_with(mb_cpu_state_t *st, const char *what,
                              const_dnnl_op_desc_t op_desc,
                              dnnl_primitive_attr_t attr,
                              dnnl_primitive_t *prim, dnnl_memory_t *scratch) {
  dnnl_status_t s =
      dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  if (s != dnnl_success) {
    MB_CPU_ERROR(st, "cpu/onednn: %s: scratchpad mode: %s", what,
                 dnnl_status2str(s));
    return MB_ERR_BACKEND;
  }
  dnnl_primitive_desc_t pd = NULL;
  s = dnnl_primitive_desc_create(&pd, op_desc, attr, st->engine, NULL);
  if (s != dnnl_success) {
    MB_CPU_ERROR(st,
                 "cpu/onednn: %s: oneDNN has no implementation for these "
                 "dtypes and attributes on this CPU (%s)",
                 what, dnnl_status2str(s));
    return MB_ERR_UNSUPPORTED;
  }
  log_impl(st, what, pd);
  const dnnl_memory_desc_t *scratch_md =
      dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  MB_CPU_LOG(st, MB_LOG_DEBUG, "cpu/onednn: %s: scratchpad %zu bytes", what,
             scratch_md ? dnnl_memory_desc_get_size(scratch_md) : (size_t)0);
  if (scratch_md && dnnl_memory_desc_get_size(scratch_md) > 0)
    s = dnnl_memory_create(scratch, scratch_md, st->engine,
                           DNNL_MEMORY_ALLOCATE);
  if (s == dnnl_success) s = dnnl_primitive_create(prim, pd);
  dnnl_primitive_desc_destroy(pd);
  if (s != dnnl_success) {
    MB_CPU_ERROR(st, "cpu/onednn: %s: creating the primitive: %s", what,
                 dnnl_status2str(s));
    return s == dnnl_out_of_memory ? MB_ERR_NO_MEMORY : MB_ERR_BACKEND;
  }
  return MB_OK;
}

/* Creates the primitive for `op_desc` (and its scratchpad memory, ours in
 * "user" mode so nothing is allocated inside the timed execute; NULL when it
 * needs none). `attr` is borrowed and may be NULL (defaults). Logs the
 * implementation oneDNN picked (a warning for a slow "ref" one).
 * MB_ERR_UNSUPPORTED when oneDNN has no implementation for it. */
static mb_status_t build(mb_cpu_state_t *st, const char *what,
                         const_dnnl_op_desc_t op_desc,
                         dnnl_primitive_attr_t attr, dnnl_primitive_t *prim,
                         dnnl_memory_t *scratch) {
  if (attr) return build_with(st, what, op_desc, attr, prim, scratch);
  dnnl_primitive_attr_t own = NULL;
  if (dnnl_primitive_attr_create(&own) != dnnl_success) {
    MB_CPU_ERROR(st, "cpu/onednn: %s: out of memory for attributes", what);
    return MB_ERR_NO_MEMORY;
  }
  mb_status_t status = build_with(st, what, op_desc, own, prim, scratch);
  dnnl_primitive_attr_destroy(own);
  return status;
}

mb_status_t mb__cpu_onednn_create(mb_cpu_state_t *st, const char *what,
                                  const_dnnl_op_desc_t op_desc,
                                  dnnl_primitive_attr_t attr,
                                  const mb_cpu_onednn_operands_t *ops,
                                  const mb_kernel_call_t *call, void **kstate) {
  onednn_kernel_t *k = calloc(1, sizeof *k);
  if (!k) {
    MB_CPU_ERROR(st, "cpu/onednn: %s: out of memory", what);
    return MB_ERR_NO_MEMORY;
  }
  k->st = st;
  snprintf(k->what, sizeof k->what, "%s", what);
  mb_status_t status = build(st, what, op_desc, attr, &k->prim, &k->scratch);
  k->nmem = ops->n; /* release() skips the memory objects not made */
  for (int i = 0; i < ops->n && status == MB_OK; ++i) {
    k->operand[i] = ops->operand[i];
    k->bound[i] = operand_ptr(call, ops->operand[i]);
    const dnnl_status_t s =
        dnnl_memory_create(&k->mem[i], &ops->md[i], st->engine, k->bound[i]);
    if (s != dnnl_success) {
      MB_CPU_ERROR(st, "cpu/onednn: %s: wrapping operand %d: %s", what, i,
                   dnnl_status2str(s));
      status = MB_ERR_BACKEND;
    }
    k->args[k->nargs++] = (dnnl_exec_arg_t){ops->arg[i], k->mem[i]};
  }
  if (status != MB_OK) {
    mb__cpu_onednn_release(k);
    return status;
  }
  if (k->scratch)
    k->args[k->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, k->scratch};
  *kstate = k;
  return MB_OK;
}

/* Executes on `stream` and waits: the timed part of a kernel. */
static mb_status_t execute(mb_cpu_state_t *st, const char *what,
                           dnnl_primitive_t prim, dnnl_stream_t stream,
                           int nargs, const dnnl_exec_arg_t *args) {
  const dnnl_status_t s = mb__cpu_onednn_exec(prim, stream, nargs, args);
  if (s != dnnl_success) {
    MB_CPU_ERROR(st, "cpu/onednn: %s: execution failed: %s", what,
                 dnnl_status2str(s));
    return MB_ERR_BACKEND;
  }
  return MB_OK;
}

mb_status_t mb__cpu_onednn_run(void *kstate, const mb_kernel_call_t *call) {
  const onednn_kernel_t *k = kstate;
  return mb__cpu_onednn_run_on(kstate, call, k->st->stream);
}

mb_status_t mb__cpu_onednn_run_on(void *kstate, const mb_kernel_call_t *call,
                                  dnnl_stream_t stream) {
  onednn_kernel_t *k = kstate;
  mb_cpu_state_t *st = k->st;
  /* Re-pointing a memory object at another buffer is cheap on CPU, so a
   * caller rotating through operand copies needs no new primitive. */
  for (int i = 0; i < k->nmem; ++i) {
    void *p = operand_ptr(call, k->operand[i]);
    if (p == k->bound[i]) continue;
    const dnnl_status_t s = dnnl_memory_set_data_handle(k->mem[i], p);
    if (s != dnnl_success) {
      MB_CPU_ERROR(st, "cpu/onednn: %s: re-pointing operand %d: %s", k->what, i,
                   dnnl_status2str(s));
      return MB_ERR_BACKEND;
    }
    k->bound[i] = p;
  }
  return execute(st, k->what, k->prim, stream, k->nargs, k->args);
}

mb_status_t mb__cpu_onednn_packed_matmul(mb_cpu_state_t *st, const char *what,
                                         int64_t rows, int64_t inner,
                                         int64_t cols, dnnl_primitive_t *prim,
                                         dnnl_memory_desc_t *packed,
                                         dnnl_memory_desc_t *scratch) {
  const dnnl_dims_t sd = {rows, inner}, wd = {inner, cols}, dd = {rows, cols};
  dnnl_memory_desc_t src, wei, dst;
  dnnl_matmul_desc_t desc;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_status_t s =
      dnnl_memory_desc_init_by_tag(&src, 2, sd, dnnl_bf16, dnnl_ab);
  if (s == dnnl_success)
    s = dnnl_memory_desc_init_by_tag(&wei, 2, wd, dnnl_bf16,
                                     dnnl_format_tag_any);
  if (s == dnnl_success)
    s = dnnl_memory_desc_init_by_tag(&dst, 2, dd, dnnl_f32, dnnl_ab);
  if (s == dnnl_success)
    s = dnnl_matmul_desc_init(&desc, &src, &wei, NULL, &dst);
  if (s == dnnl_success) s = dnnl_primitive_attr_create(&attr);
  if (s == dnnl_success)
    s = dnnl_primitive_attr_set_scratchpad_mode(attr,
                                                dnnl_scratchpad_mode_user);
  if (s == dnnl_success)
    s = dnnl_primitive_desc_create(&pd, &desc, attr, st->engine, NULL);
  if (attr) dnnl_primitive_attr_destroy(attr);
  if (s == dnnl_success) {
    log_impl(st, what, pd);
    *scratch = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    *packed = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    MB_CPU_LOG(st, MB_LOG_DEBUG,
               "cpu/onednn: %s: scratchpad %zu bytes, packed weights %zu bytes",
               what, dnnl_memory_desc_get_size(scratch),
               dnnl_memory_desc_get_size(packed));
    s = dnnl_primitive_create(prim, pd);
  }
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (s == dnnl_success) return MB_OK;
  MB_CPU_ERROR(st, "cpu/onednn: %s: %lldx%lldx%lld bf16 matmul: %s", what,
               (long long)rows, (long long)inner, (long long)cols,
               dnnl_status2str(s));
  return MB_ERR_UNSUPPORTED;
}

mb_status_t mb__cpu_onednn_reorder(mb_cpu_state_t *st, const char *what,
                                   const dnnl_memory_desc_t *from,
                                   const dnnl_memory_desc_t *to,
                                   dnnl_primitive_t *prim) {
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  size_t scratch = 0;
  /* "User" mode: oneDNN allocates nothing inside the timed run; these
   * reorders (plain to blocked) book no scratchpad to hand them. */
  dnnl_status_t s = dnnl_primitive_attr_create(&attr);
  if (s == dnnl_success)
    s = dnnl_primitive_attr_set_scratchpad_mode(attr,
                                                dnnl_scratchpad_mode_user);
  if (s == dnnl_success)
    s = dnnl_reorder_primitive_desc_create(&pd, from, st->engine, to,
                                           st->engine, attr);
  if (attr) dnnl_primitive_attr_destroy(attr);
  if (s == dnnl_success)
    scratch = dnnl_memory_desc_get_size(
        dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0));
  if (s == dnnl_success && scratch == 0) s = dnnl_primitive_create(prim, pd);
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (s == dnnl_success && scratch == 0) return MB_OK;
  if (s == dnnl_success)
    MB_CPU_ERROR(st,
                 "cpu/onednn: %s: the packing reorder wants a %zu-byte "
                 "scratchpad",
                 what, scratch);
  else
    MB_CPU_ERROR(st, "cpu/onednn: %s: packing reorder: %s", what,
                 dnnl_status2str(s));
  return MB_ERR_UNSUPPORTED;
}

dnnl_status_t mb__cpu_onednn_exec(dnnl_primitive_t prim, dnnl_stream_t stream,
                                  int n, const dnnl_exec_arg_t *args) {
  dnnl_status_t s = dnnl_primitive_execute(prim, stream, n, args);
  if (s == dnnl_success) s = dnnl_stream_wait(stream);
  return s;
}

/* oneDNN books a primitive's scratchpad for the threads it sees when the
 * primitive is created (omp_get_max_threads()). The weight-only GEMM's
 * tiles and attention's matmuls run inside our parallel regions, where
 * oneDNN runs each call on the calling thread alone, with that thread's own
 * scratchpad: created outside, each of those scratchpads held every
 * thread's share, threads^2 shares in all (measured: a 256 x 128 x 512
 * bf16 matmul books 21 KB on one thread, 1.3 MB on 64, so 64 threads' four
 * tiles would hold 344 MB where 5.5 MB does). Created here they book one
 * thread's, and run on one thread wherever they run (a primitive keeps the
 * thread count it was created for). The team of one sets its own thread
 * count (an ICV of its implicit task); the caller's stays as it was. */
mb_status_t mb__cpu_onednn_one_thread(mb_status_t (*fn)(void *arg), void *arg) {
  mb_status_t s = MB_OK;
#pragma omp parallel num_threads(1)
  {
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    s = fn(arg);
  }
  return s;
}
