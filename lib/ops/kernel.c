/* The kernel registry: user kernels registered in the context, plus the
 * constant kernel tables of loaded backends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kernel.h"

static int valid_impl_name(const char *s) {
  if (!s || !*s) return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
      return 0;
  return 1;
}

mb_status_t mb_kernel_register(mb_context_t *ctx,
                               const mb_kernel_desc_t *given) {
  if (!ctx || !given)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_kernel_register: NULL argument");
  mb_kernel_desc_t desc = MB_KERNEL_DESC_INIT;
  mb_status_t st =
      mb__struct_in(MB__STRUCT_KERNEL_DESC, "mb_kernel_register", given, &desc);
  if (st != MB_OK) return st;
  const mb_kernel_desc_t *d = &desc;
  const mb_op_t *op = mb_op_find(d->op);
  if (!op) {
    mb__error_prefix("mb_kernel_register");
    return MB_ERR_NOT_FOUND;
  }
  if (!valid_impl_name(d->name))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_kernel_register: name \"%s\" must match [a-z0-9_]+",
                    d->name ? d->name : "(null)");
  if (!d->backend || !*d->backend)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_kernel_register: backend is empty");
  if (!d->run)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_kernel_register: run is NULL");
  if (mb_dtype_bits(d->dtype) == 0)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_kernel_register: dtype must be set (got %s)",
                    mb_dtype_name(d->dtype));
  for (size_t i = 0; i < ctx->num_user_kernels; i++) {
    const mb__user_kernel_t *u = &ctx->user_kernels[i];
    if (strcmp(u->op, op->name) == 0 && strcmp(u->name, d->name) == 0 &&
        strcmp(u->backend, d->backend) == 0 && u->desc.dtype == d->dtype &&
        u->desc.dtype_out == d->dtype_out)
      return mb__fail(MB_ERR_INVALID_ARG,
                      "mb_kernel_register: %s kernel \"%s\" for %s on %s is "
                      "already registered",
                      op->name, d->name, mb_dtype_name(d->dtype), d->backend);
  }
  mb__user_kernel_t *grown =
      realloc(ctx->user_kernels, (ctx->num_user_kernels + 1) * sizeof *grown);
  if (!grown)
    return mb__fail(MB_ERR_NO_MEMORY, "mb_kernel_register: out of memory");
  ctx->user_kernels = grown;
  mb__user_kernel_t *u = &grown[ctx->num_user_kernels];
  u->desc = *d;
  u->op = mb__strdup(op->name);
  u->name = mb__strdup(d->name);
  u->backend = mb__strdup(d->backend);
  if (!u->op || !u->name || !u->backend) {
    free(u->op);
    free(u->name);
    free(u->backend);
    return mb__fail(MB_ERR_NO_MEMORY, "mb_kernel_register: out of memory");
  }
  u->desc.op = u->op;
  u->desc.name = u->name;
  u->desc.backend = u->backend;
  ctx->num_user_kernels++;
  return MB_OK;
}

size_t mb_kernel_count(const mb_context_t *ctx) {
  if (!ctx) return 0;
  size_t n = ctx->num_user_kernels;
  for (size_t i = 0; i < ctx->num_backends; i++)
    if (ctx->backends[i].vt) n += ctx->backends[i].num_listed;
  return n;
}

mb_status_t mb_kernel_info(const mb_context_t *ctx, size_t index,
                           mb_kernel_info_t *out) {
  if (!ctx || !out)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_kernel_info: NULL argument");
  mb_kernel_info_t info = MB_KERNEL_INFO_INIT;
  if (index < ctx->num_user_kernels) {
    const mb__user_kernel_t *u = &ctx->user_kernels[index];
    info.op = u->op;
    info.name = u->name;
    info.backend = u->backend;
    info.dtype = u->desc.dtype;
    info.dtype_out = u->desc.dtype_out;
    info.user = 1;
  } else {
    size_t k = index - ctx->num_user_kernels;
    const mb__backend_t *b = NULL;
    for (size_t i = 0; i < ctx->num_backends; i++) {
      if (!ctx->backends[i].vt) continue;
      if (k < ctx->backends[i].num_listed) {
        b = &ctx->backends[i];
        break;
      }
      k -= ctx->backends[i].num_listed;
    }
    if (!b)
      return mb__fail(MB_ERR_INVALID_ARG,
                      "mb_kernel_info: index %zu out of range", index);
    const mb_backend_kernel_t *bk = &b->vt->kernels[b->listed[k]];
    info.op = bk->op;
    info.name = bk->name;
    info.backend = b->name;
    info.dtype = bk->dtype;
    info.dtype_out = bk->dtype_out;
  }
  return mb__struct_out(MB__STRUCT_KERNEL_INFO, "mb_kernel_info", &info, out);
}

static int dtype_matches(mb_dtype_t want, mb_dtype_t have) {
  return want == MB_DTYPE_NONE || want == have;
}

static int backend_kernel_matches(const mb_backend_kernel_t *k,
                                  const mb_op_t *op, const mb_op_params_t *p) {
  return strcmp(k->op, op->name) == 0 && dtype_matches(k->dtype, p->dtype) &&
         dtype_matches(k->dtype_b, p->dtype_b) &&
         dtype_matches(k->dtype_out, p->dtype_out) &&
         dtype_matches(k->dtype_acc, p->dtype_acc);
}

static int user_kernel_matches(const mb__user_kernel_t *u, const mb_op_t *op,
                               const mb_op_params_t *p, const char *backend) {
  return strcmp(u->op, op->name) == 0 && strcmp(u->backend, backend) == 0 &&
         u->desc.dtype == p->dtype &&
         dtype_matches(u->desc.dtype_out, p->dtype_out);
}

/* A kernel slot that takes any dtype reads "*". */
static const char *slot(mb_dtype_t d) {
  return d == MB_DTYPE_NONE ? "*" : mb_dtype_name(d);
}

/* Appends "name(dtype->out)" for every kernel of `op` on the backend. */
/* Appends " token" to buf unless buf has it already (a backend lists one
 * kernel per dtype row: "onednn(bf16->*)" came several times). */
static void add_token(char *buf, size_t cap, const char *token) {
  const size_t tn = strlen(token), len = strlen(buf);
  for (const char *p = buf; (p = strstr(p, token)) != NULL; p += tn)
    if (p > buf && p[-1] == ' ' && (p[tn] == ' ' || p[tn] == '\0')) return;
  if (len + 1 + tn < cap) snprintf(buf + len, cap - len, " %s", token);
}

/* The kernels of op on backend b, each once: "name(in->out)", or with
 * `names_only` the implementation names alone. */
static void describe_kernels(const mb_context_t *ctx, const mb_op_t *op,
                             const mb__backend_t *b, int names_only, char *buf,
                             size_t cap) {
  char token[160];
  for (size_t i = 0; i < ctx->num_user_kernels; i++) {
    const mb__user_kernel_t *u = &ctx->user_kernels[i];
    if (strcmp(u->op, op->name) != 0 || strcmp(u->backend, b->name) != 0)
      continue;
    if (names_only)
      snprintf(token, sizeof token, "%s", u->name);
    else
      snprintf(token, sizeof token, "%s(%s)", u->name,
               mb_dtype_name(u->desc.dtype));
    add_token(buf, cap, token);
  }
  for (size_t i = 0; i < b->vt->num_kernels; i++) {
    const mb_backend_kernel_t *k = &b->vt->kernels[i];
    if (strcmp(k->op, op->name) != 0) continue;
    if (names_only)
      snprintf(token, sizeof token, "%s", k->name);
    else
      snprintf(token, sizeof token, "%s(%s->%s)", k->name, slot(k->dtype),
               slot(k->dtype_out));
    add_token(buf, cap, token);
  }
}

static int impl_on(const mb_context_t *ctx, const mb_op_t *op,
                   const mb__backend_t *b, const char *impl, int users) {
  for (size_t i = 0; users && i < ctx->num_user_kernels; i++) {
    const mb__user_kernel_t *u = &ctx->user_kernels[i];
    if (!strcmp(u->name, impl) && !strcmp(u->op, op->name) &&
        !strcmp(u->backend, b->name))
      return 1;
  }
  for (size_t i = 0; i < b->vt->num_kernels; i++)
    if (!strcmp(b->vt->kernels[i].name, impl) &&
        !strcmp(b->vt->kernels[i].op, op->name))
      return 1;
  return 0;
}

mb_status_t mb__kernel_impl_known(const mb_context_t *ctx, const mb_op_t *op,
                                  const mb__backend_t *b, const char *impl,
                                  int users) {
  if (!impl || impl_on(ctx, op, b, impl, users)) return MB_OK;
  char list[1024] = "";
  describe_kernels(ctx, op, b, 1, list, sizeof list);
  return mb__fail(MB_ERR_NOT_FOUND,
                  "unknown implementation \"%s\" for %s on %s; available:%s",
                  impl, op->name, b->name, *list ? list : " none");
}

/* `after`: a backend kernel entry already tried (its prepare declined):
 * the search resumes behind it, user kernels not considered. */
static mb_status_t select_kernel(const mb_context_t *ctx, const mb_op_t *op,
                                 const mb_op_params_t *p,
                                 const mb_device_t *dev, const char *impl,
                                 int users, const mb_backend_kernel_t *after,
                                 mb__kernel_t *out, char *why, size_t why_cap) {
  const mb__backend_t *b = dev->backend;
  mb_status_t st = mb__kernel_impl_known(ctx, op, b, impl, users);
  if (st != MB_OK) {
    snprintf(why, why_cap, "%s", mb_error_last());
    return st;
  }
  /* Every distinct reason a matching kernel gave, so a skip explains
   * itself ("tf32: ..." rather than only the last kernel's reason), copied
   * as each supports() returns: a formatted one lives in the context's
   * host.reason buffer only until the next refusal. */
  char refusals[4][sizeof ctx->reason];
  size_t num_refusals = 0;
  why[0] = '\0';
  for (size_t i = 0; users && !after && i < ctx->num_user_kernels; i++) {
    const mb__user_kernel_t *u = &ctx->user_kernels[i];
    if ((impl && strcmp(u->name, impl) != 0) ||
        !user_kernel_matches(u, op, p, b->name))
      continue;
    *out = (mb__kernel_t){u->name, NULL, u, 0};
    return MB_OK;
  }
  size_t first = 0;
  if (after && after >= b->vt->kernels &&
      after < b->vt->kernels + b->vt->num_kernels)
    first = (size_t)(after - b->vt->kernels) + 1;
  for (size_t i = first; i < b->vt->num_kernels; i++) {
    const mb_backend_kernel_t *k = &b->vt->kernels[i];
    if ((impl && strcmp(k->name, impl) != 0) ||
        !backend_kernel_matches(k, op, p))
      continue;
    const char *no = NULL;
    if (k->supports && k->supports(b->state, dev->index, p, &no) != MB_OK) {
      no = no ? no : "refused by the backend";
      int seen = 0;
      for (size_t j = 0; j < num_refusals; j++)
        seen |= strcmp(refusals[j], no) == 0;
      if (!seen && num_refusals < 4)
        snprintf(refusals[num_refusals++], sizeof refusals[0], "%s", no);
      continue;
    }
    *out = (mb__kernel_t){k->name, k, NULL, 0};
    return MB_OK;
  }
  int n = snprintf(why, why_cap, "no %s kernel on %s for %s x %s -> %s%s%s%s",
                   op->name, b->name, mb_dtype_name(p->dtype),
                   mb_dtype_name(p->dtype_b), mb_dtype_name(p->dtype_out),
                   impl ? " named " : "", impl ? impl : "",
                   num_refusals ? " (" : "; available:");
  if (n > 0 && (size_t)n < why_cap) {
    size_t len = (size_t)n;
    for (size_t j = 0; j < num_refusals && len < why_cap; j++) {
      n = snprintf(why + len, why_cap - len, "%s%s", j ? "; " : "",
                   refusals[j]);
      if (n > 0) len += (size_t)n;
    }
    if (num_refusals && len + 1 < why_cap)
      snprintf(why + len, why_cap - len, ")");
    else if (!num_refusals)
      describe_kernels(ctx, op, b, 0, why, why_cap);
  }
  return MB_ERR_UNSUPPORTED;
}

mb_status_t mb__kernel_select(const mb_context_t *ctx, const mb_op_t *op,
                              const mb_op_params_t *p, const mb_device_t *dev,
                              const char *impl, mb__kernel_t *out, char *why,
                              size_t why_cap) {
  return select_kernel(ctx, op, p, dev, impl, 1, NULL, out, why, why_cap);
}

mb_status_t mb__kernel_select_backend(
    const mb_context_t *ctx, const mb_op_t *op, const mb_op_params_t *p,
    const mb_device_t *dev, const mb_backend_kernel_t *after, mb__kernel_t *out,
    char *why, size_t why_cap) {
  return select_kernel(ctx, op, p, dev, NULL, 0, after, out, why, why_cap);
}

/* The dtype a kernel's MB_KERNEL_NOTE_MATH note names; NONE without one. */
static mb_dtype_t math_dtype(const mb_backend_kernel_t *bk, void *kstate) {
  if (!bk || !bk->notes) return MB_DTYPE_NONE;
  mb_kernel_note_t notes[MB__MAX_KERNEL_NOTES];
  uint32_t n = bk->notes(kstate, notes, MB__MAX_KERNEL_NOTES);
  mb_dtype_t d = MB_DTYPE_NONE;
  for (uint32_t i = 0; i < n && i < MB__MAX_KERNEL_NOTES; i++)
    if (notes[i].text && !strcmp(notes[i].key, MB_KERNEL_NOTE_MATH) &&
        mb_dtype_from_name(notes[i].text, &d) == MB_OK)
      return d;
  return MB_DTYPE_NONE;
}

double mb__kernel_link_gbps(const mb_backend_kernel_t *bk, void *kstate) {
  if (!bk || !bk->notes) return 0.0;
  mb_kernel_note_t notes[MB__MAX_KERNEL_NOTES];
  uint32_t n = bk->notes(kstate, notes, MB__MAX_KERNEL_NOTES);
  for (uint32_t i = 0; i < n && i < MB__MAX_KERNEL_NOTES; i++)
    if (!notes[i].text && !strcmp(notes[i].key, MB_KERNEL_NOTE_LINK))
      return notes[i].value > 0 ? notes[i].value : 0.0;
  return 0.0;
}

double mb__kernel_peak(const mb_device_t *dev, const mb_backend_kernel_t *bk,
                       void *kstate, const mb_op_t *op,
                       const mb_op_params_t *p) {
  if (bk && (bk->flags & MB_KERNEL_EMULATED)) return 0.0;
  const mb_dtype_t math = math_dtype(bk, kstate);
  if (math != MB_DTYPE_NONE) return mb_device_peak_flops(dev, math);
  const mb__backend_t *b = dev->backend;
  return MB__VT_HAS(b->vt, peak_for)
             ? b->vt->peak_for(b->state, dev->index, op->name, p)
             : mb_device_peak_flops(dev, p->dtype);
}
