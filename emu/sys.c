/* sys.c - what the emulator runs beside exec.c: the instructions the
 * parser marks EMM_SYS (ptx.c, sys_fixup).
 *
 *   local memory: each thread its own window of EmModule.local_bytes (the
 *   .local variables at their EmGlobal.offset, zeroed), made at the first
 *   use in a CTA; ld.local/st.local, a .local variable's address (mov),
 *   cvta.local to and from generic addresses (EM_LOCAL_GENERIC + offset).
 *   A generic ld/st of a local address is exec.c's and is refused there
 *   (outside every allocation): what tilec emits reaches local memory only
 *   through ld/st.local (its vprintf buffers) and vprintf's argument.
 *   call vprintf: the format (a NUL-terminated string in global memory) and
 *   the arguments buffer (each argument aligned to its size, as the CUDA
 *   toolchain packs them: 4 bytes for int conversions without a length and
 *   %c, 8 for l/ll/j/z/t, doubles, strings and pointers) formatted as printf
 *   does, written to stdout. Any other callee is reported.
 *   trap: a report, naming the last line the thread printed (a failed
 *   device_assert's message: tilec prints it just before the trap).
 */
#include <stdio.h>
#include <stdlib.h>

#include "exec_int.h"

enum { SYS_LAST = 256, SYS_FMT_MAX = 4096, SYS_OUT_MAX = 16384 };

typedef struct EmSys {
  uint8_t *local;         /* c->n windows of local_bytes */
  char (*last)[SYS_LAST]; /* what each thread printed last */
} EmSys;

static const uint8_t sys_type_bytes[] = {0, 1, 1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 2, 4, 4, 8, 8};
_Static_assert(sizeof sys_type_bytes == ET_F32X2 + 1, "sys_type_bytes is out of step with EmType");

void em_sys_free(Cta *c) {
  if (!c->sys) return;
  free(c->sys->local);
  free(c->sys->last);
  free(c->sys);
  c->sys = NULL;
}

static EmSys *sys_of(Cta *c, const Thr *t, const EmIns *in) {
  if (c->sys) return c->sys;
  EmSys *s = calloc(1, sizeof *s);
  size_t lb = c->m->local_bytes ? c->m->local_bytes : 1;
  if (s) s->local = calloc((size_t)c->n, lb), s->last = calloc((size_t)c->n, sizeof *s->last);
  if (!s || !s->local || !s->last) {
    if (s) free(s->local), free(s->last);
    free(s);
    em_fail(c, t, in, "out of host memory for the threads' local memory");
    return NULL;
  }
  return c->sys = s;
}

/* The host bytes of local address a (an offset in t's window). */
static uint8_t *local_at(Cta *c, const Thr *t, const EmIns *in, uint64_t a, size_t n) {
  EmSys *s = sys_of(c, t, in);
  if (!s) return NULL;
  uint64_t lb = c->m->local_bytes;
  if (a > lb || n > lb - a) {
    em_fail(c, t, in, "local-memory access at %llu (%zu bytes) outside the thread's %llu bytes", (unsigned long long)a,
            n, (unsigned long long)lb);
    return NULL;
  }
  return s->local + (size_t)(t - c->t) * lb + a;
}

/* A .local variable named by an operand (its offset), or -1. */
static int64_t local_sym(const Cta *c, const EmArg *a) {
  if ((a->kind != EA_SYM && a->kind != EA_ADDR) || a->param || a->sym < 0 || a->sym >= c->m->nglobals) return -1;
  const EmGlobal *g = &c->m->globals[a->sym];
  return g->space == ES_LOCAL ? (int64_t)g->offset : -1;
}

/* A value operand: a .local variable's address, else what exec reads. */
static uint64_t value(const Cta *c, const Thr *t, const EmArg *a, EmType ty) {
  int64_t off = local_sym(c, a);
  return off >= 0 ? (uint64_t)off + (uint64_t)a->imm : em_src(c, t, a, ty);
}

/* Bytes at generic address a: t's local window, or what exec reaches. */
static uint8_t *generic_at(Cta *c, const Thr *t, const EmIns *in, uint64_t a, size_t n) {
  if (a >= EM_LOCAL_GENERIC && a < EM_LOCAL_GENERIC + (1ull << 32)) return local_at(c, t, in, a - EM_LOCAL_GENERIC, n);
  return em_mem(c, t, in, ES_GENERIC, a, n);
}

static void local_ldst(Cta *c, Thr *t, const EmIns *in) {
  bool ld = in->opc == EM_LD;
  const EmArg *ad = &in->a[ld ? 1 : 0], *v = &in->a[ld ? 0 : 1];
  EmType ty = (EmType)in->type;
  size_t eb = ty <= ET_F32X2 ? sys_type_bytes[ty] : 0;
  int n = in->vec > 1 ? in->vec : 1;
  if (in->nargs != 2 || !eb || (n > 1 && (v->kind != EA_VEC || v->nvec != n)) || (n == 1 && v->kind == EA_VEC)) {
    em_fail(c, t, in, "the emulator cannot run this local-memory access");
    return;
  }
  uint64_t a;
  int64_t off = local_sym(c, ad);
  if (off >= 0) a = (uint64_t)off + (uint64_t)ad->imm;
  else if (ad->kind == EA_ADDR && ad->reg >= 0) a = t->r[ad->reg] + (uint64_t)ad->imm;
  else {
    em_fail(c, t, in, "not a local-memory address");
    return;
  }
  if (a % (eb * (size_t)n < 16 ? eb * (size_t)n : 16)) {
    em_fail(c, t, in, "misaligned %zu-byte local-memory access at %llu", eb * (size_t)n, (unsigned long long)a);
    return;
  }
  uint8_t *p = local_at(c, t, in, a, eb * (size_t)n);
  if (!p) return;
  for (int i = 0; i < n; i++) {
    EmArg e = n > 1 ? (EmArg){.kind = v->vec[i] < 0 ? EA_SINK : EA_REG, .reg = v->vec[i], .sym = -1} : *v;
    uint64_t x = 0;
    if (ld) {
      memcpy(&x, p + (size_t)i * eb, eb);
      em_dst(t, &e, ty, x);
    } else {
      x = e.kind == EA_SINK ? 0 : em_src(c, t, &e, ty);
      memcpy(p + (size_t)i * eb, &x, eb);
    }
  }
  t->pc++;
}

/* ---- vprintf ---- */

typedef struct Out {
  char buf[SYS_OUT_MAX];
  size_t n;
} Out;

static void out_put(Out *o, const char *s, size_t n) {
  if (n > sizeof o->buf - 1 - o->n) n = sizeof o->buf - 1 - o->n;
  memcpy(o->buf + o->n, s, n);
  o->n += n;
  o->buf[o->n] = 0;
}

/* A NUL-terminated string at generic address a (at most cap - 1 bytes). */
static bool read_str(Cta *c, const Thr *t, const EmIns *in, uint64_t a, char *s, size_t cap) {
  for (size_t i = 0; i + 1 < cap; i++) {
    const uint8_t *p = generic_at(c, t, in, a + i, 1);
    if (!p) return false;
    if (!(s[i] = (char)*p)) return true;
  }
  s[cap - 1] = 0;
  return true;
}

static void sys_vprintf(Cta *c, Thr *t, const EmIns *in) {
  if (in->nargs != 3) {
    em_fail(c, t, in, "vprintf takes a format and an argument buffer");
    return;
  }
  uint64_t fa = em_src(c, t, &in->a[1], ET_B64), aa = em_src(c, t, &in->a[2], ET_B64), off = 0;
  char fmt[SYS_FMT_MAX];
  if (!fa) {
    em_fail(c, t, in, "vprintf with a null format");
    return;
  }
  if (!read_str(c, t, in, fa, fmt, sizeof fmt)) return;
  static _Thread_local Out o;
  o.n = 0;
  o.buf[0] = 0;
  int nargs = 0;
  for (const char *p = fmt; *p; p++) {
    if (*p != '%') {
      const char *q = strchr(p, '%');
      size_t len = q ? (size_t)(q - p) : strlen(p);
      out_put(&o, p, len);
      p += len - 1;
      continue;
    }
    if (p[1] == '%') {
      out_put(&o, "%", 1);
      p++;
      continue;
    }
    /* %[flags][width][.precision][length]conversion */
    const char *q = p + 1;
    long width = 0, prec = 0;
    while (*q && strchr("-+ #0", *q)) q++;
    for (; *q >= '0' && *q <= '9'; q++)
      if (width < 100000) width = width * 10 + (*q - '0');
    if (*q == '.')
      for (q++; *q >= '0' && *q <= '9'; q++)
        if (prec < 100000) prec = prec * 10 + (*q - '0');
    if (width > 1000 || prec > 1000) {
      em_fail(c, t, in, "vprintf: a width or precision over 1000 in \"%.60s\"", fmt);
      return;
    }
    const char *len = q;
    while (*q && strchr("hlLqjzt", *q)) q++;
    char conv = *q, spec[64];
    size_t head = (size_t)(len - p), lmod = (size_t)(q - len);
    if (!conv || head > 40) {
      em_fail(c, t, in, "vprintf: a conversion it cannot read in \"%.60s\"", fmt);
      return;
    }
    bool is_int = strchr("diouxXc", conv) != NULL, is_float = strchr("fFeEgGaA", conv) != NULL;
    if (!is_int && !is_float && conv != 's' && conv != 'p') {
      em_fail(c, t, in, "vprintf: '%%%c' is not a conversion the emulator formats", conv);
      return;
    }
    size_t size = is_int && conv != 'c' && lmod && (len[0] != 'h') ? 8 : is_int ? 4 : 8;
    off = (off + size - 1) / size * size;
    const uint8_t *ap = aa ? generic_at(c, t, in, aa + off, size) : NULL;
    if (!ap) {
      if (!c->failed) em_fail(c, t, in, "vprintf: no argument buffer for \"%.60s\"", fmt);
      return;
    }
    uint64_t raw = 0;
    memcpy(&raw, ap, size);
    off += size;
    nargs++;
    char piece[512];
    memcpy(spec, p, head);
    if (is_int && conv != 'c') {
      bool sgn = conv == 'd' || conv == 'i';
      long long v = size == 4 ? (sgn ? (long long)(int32_t)raw : (long long)(uint32_t)raw) : (long long)raw;
      if (lmod && len[0] == 'h') v = lmod == 2 ? (sgn ? (long long)(int8_t)raw : (long long)(uint8_t)raw)
                                               : (sgn ? (long long)(int16_t)raw : (long long)(uint16_t)raw);
      snprintf(spec + head, sizeof spec - head, "ll%c", conv);
      snprintf(piece, sizeof piece, spec, v);
    } else if (conv == 'c') {
      snprintf(spec + head, sizeof spec - head, "c");
      snprintf(piece, sizeof piece, spec, (int)(uint8_t)raw);
    } else if (is_float) {
      double d;
      memcpy(&d, &raw, 8);
      snprintf(spec + head, sizeof spec - head, "%c", conv);
      snprintf(piece, sizeof piece, spec, d);
    } else if (conv == 's') {
      char str[512];
      if (!raw) snprintf(str, sizeof str, "(null)");
      else if (!read_str(c, t, in, raw, str, sizeof str)) return;
      snprintf(spec + head, sizeof spec - head, "s");
      snprintf(piece, sizeof piece, spec, str);
    } else {
      snprintf(piece, sizeof piece, "0x%llx", (unsigned long long)raw);
    }
    out_put(&o, piece, strlen(piece));
    p = q;
  }
  fwrite(o.buf, 1, o.n, stdout);
  fflush(stdout);
  EmSys *s = sys_of(c, t, in);
  if (!s) return;
  char *last = s->last[t - c->t];
  snprintf(last, SYS_LAST, "%s", o.buf);
  size_t k = strlen(last);
  while (k && (last[k - 1] == '\n' || last[k - 1] == '\r')) last[--k] = 0;
  em_dst(t, &in->a[0], ET_B32, (uint64_t)nargs);
  t->pc++;
}

void em_sys_step(Cta *c, Thr *t) {
  const EmIns *in = &c->f->ins[t->pc];
  if (in->guard >= 0 && (t->r[in->guard] != 0) == in->guard_neg) { /* predicated off */
    t->pc++;
    return;
  }
  EmType ty = (EmType)in->type;
  switch (in->opc) {
  case EM_TRAP: {
    const char *last = c->sys ? c->sys->last[t - c->t] : "";
    if (*last) em_fail(c, t, in, "trap: the kernel stopped; this thread printed last: %s", last);
    else em_fail(c, t, in, "trap: the kernel stopped");
    return;
  }
  case EM_CALL:
    if (in->rank == 1) sys_vprintf(c, t, in);
    else em_fail(c, t, in, "the emulator runs calls of vprintf only");
    return;
  case EM_LD:
  case EM_ST:
    if (in->space == ES_LOCAL) {
      local_ldst(c, t, in);
      return;
    }
    break;
  case EM_MOV:
    if (in->nargs == 2 && local_sym(c, &in->a[1]) >= 0) { /* a .local variable's address */
      em_dst(t, &in->a[0], ty, value(c, t, &in->a[1], ty));
      t->pc++;
      return;
    }
    break;
  case EM_CVTA:
    if (in->nargs == 2 && in->space == ES_LOCAL) {
      uint64_t x = value(c, t, &in->a[1], ET_U64);
      if (in->mod & EMM_TO) {
        if (x < EM_LOCAL_GENERIC || x >= EM_LOCAL_GENERIC + (1ull << 32)) {
          em_fail(c, t, in, "cvta.to.local of 0x%llx, not a local address", (unsigned long long)x);
          return;
        }
        x -= EM_LOCAL_GENERIC;
      } else {
        x += EM_LOCAL_GENERIC;
      }
      em_dst(t, &in->a[0], ty, x);
      t->pc++;
      return;
    }
    break;
  default: break;
  }
  em_fail(c, t, in, "the emulator cannot run this use of local memory yet");
}
