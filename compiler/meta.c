/* meta.c - the kernel metadata text that travels inside every cubin as the
 * device global __tile_meta (format: docs/metadata.md). */
#include "tilec_int.h"

void md_write(Ctx *c, TModule *m, Buf *out) {
  buf_printf(out, "tile-meta 1\narch %s\n", c->arch);
  for (int k = 0; k < m->kernels.len; k++) {
    TFunc *f = m->kernels.data[k];
    buf_printf(out, "kernel %s\nthreads %d\nsmem %d\ncluster %d %d %d\n", f->name, f->warps * 32, f->smem_bytes,
               f->cluster[0], f->cluster[1], f->cluster[2]);
    if (f->tmem_cols) buf_printf(out, "tmem %d\n", ir_tmem_alloc_cols(f)); /* sm_100a: TMEM columns it allocates */
    if (f->pdl) buf_puts(out, "pdl\n"); /* launched with programmatic stream serialization (it waits at entry) */
    for (int i = 0; i < f->nparams; i++) {
      TParam *p = &f->params[i];
      if (p->derived) { /* built by the runtime at launch (pipeline.c): after every parameter the caller passes */
        buf_printf(out, "derive %s tma %s %d %d swizzle %d from", p->name, ty_dtype_name((DType)p->elem.dt), p->box[0],
                   p->box[1], p->swizzle);
        for (int j = 0; j < 4; j++) {
          if (p->from[j] >= 0) buf_printf(out, " %s", f->params[p->from[j]].name);
          else buf_printf(out, " %lld", (long long)p->lit[j]);
        }
        buf_puts(out, p->planes ? " planes\n" : "\n");
      } else if (p->tma)
        buf_printf(out, "param %s tma %s 128\ntmabox %s %d %d swizzle %d\n", p->name,
                   ty_dtype_name((DType)p->elem.dt), p->name, p->box[0], p->box[1], p->swizzle);
      else if (p->elem.dt == DT_PTR)
        buf_printf(out, "param %s ptr %s %d\n", p->name, ty_dtype_name((DType)p->elem.pointee), p->align);
      else {
        buf_printf(out, "param %s scalar %s %d\n", p->name, ty_dtype_name((DType)p->elem.dt),
                   ty_dtype_bytes((DType)p->elem.dt));
        if (p->align > 1) buf_printf(out, "multiple %s %d\n", p->name, p->align);
      }
    }
    for (int i = 0; i < f->nconsts; i++)
      buf_printf(out, "const %s %s %s\n", f->consts[i].name,
                 f->consts[i].dt == DT_VOID ? "dtype" : ty_dtype_name(f->consts[i].dt), f->consts[i].text);
    buf_puts(out, "end\n");
  }
}
