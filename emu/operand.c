/* operand.c - a PTX instruction's operands for exec.c and the engines:
 * the raw bits of a source operand (a register, an immediate, a special
 * register, a symbol's address), writing a destination register, and the
 * address of a memory operand. Below every engine (async.c, matrix.c,
 * tmem.c ...): it calls only report.c. */
#include <string.h>

#include "exec_int.h"

/* The cluster's special registers (%cluster_ctarank, %clusterid ...): the
 * launch's cluster shape (cluster.c builds it). */
static uint64_t cluster_sreg(const Cta *c, int r) {
  const EmClu *u = c->clu;
  unsigned local[3] = {c->ctaid[0] % u->dim[0], c->ctaid[1] % u->dim[1], c->ctaid[2] % u->dim[2]};
  const unsigned *g = c->l->grid;
  switch (r) {
  case ESR_CLUSTER_CTARANK: return (uint64_t)c->rank;
  case ESR_CLUSTER_NCTARANK: return (uint64_t)u->n;
  case ESR_CLUSTERID_X: case ESR_CLUSTERID_Y: case ESR_CLUSTERID_Z: return c->ctaid[r - ESR_CLUSTERID_X] / u->dim[r - ESR_CLUSTERID_X];
  case ESR_NCLUSTERID_X: case ESR_NCLUSTERID_Y: case ESR_NCLUSTERID_Z: return g[r - ESR_NCLUSTERID_X] / u->dim[r - ESR_NCLUSTERID_X];
  case ESR_CLUSTER_CTAID_X: case ESR_CLUSTER_CTAID_Y: case ESR_CLUSTER_CTAID_Z: return local[r - ESR_CLUSTER_CTAID_X];
  case ESR_CLUSTER_NCTAID_X: case ESR_CLUSTER_NCTAID_Y: case ESR_CLUSTER_NCTAID_Z: return u->dim[r - ESR_CLUSTER_NCTAID_X];
  case ESR_IS_EXPLICIT_CLUSTER: return u->is_explicit;
  default: return 0;
  }
}

static uint64_t sreg(const Cta *c, const Thr *t, int id) {
  const EmLaunch *l = c->l;
  switch (id) {
  case ESR_TID_X: return t->tid[0];
  case ESR_TID_Y: return t->tid[1];
  case ESR_TID_Z: return t->tid[2];
  case ESR_NTID_X: return l->block[0];
  case ESR_NTID_Y: return l->block[1];
  case ESR_NTID_Z: return l->block[2];
  case ESR_CTAID_X: return c->ctaid[0];
  case ESR_CTAID_Y: return c->ctaid[1];
  case ESR_CTAID_Z: return c->ctaid[2];
  case ESR_NCTAID_X: return l->grid[0];
  case ESR_NCTAID_Y: return l->grid[1];
  case ESR_NCTAID_Z: return l->grid[2];
  case ESR_LANEID: return t->lane;
  case ESR_WARPID: return t->warp;
  case ESR_NWARPID: return (unsigned)(c->n + 31) / 32;
  case ESR_SMID: return 0;
  case ESR_NSMID: return 1;
  case ESR_CLOCK: case ESR_CLOCK64: return c->steps;
  case ESR_LANEMASK_EQ: return 1u << t->lane;
  case ESR_LANEMASK_LT: return (1u << t->lane) - 1;
  case ESR_LANEMASK_LE: return (uint32_t)((2ull << t->lane) - 1);
  case ESR_LANEMASK_GT: return ~(uint32_t)((2ull << t->lane) - 1);
  case ESR_LANEMASK_GE: return ~((1u << t->lane) - 1);
  case ESR_DYN_SMEM_SIZE: return c->l->dyn_smem;
  case ESR_TOTAL_SMEM_SIZE: return c->smem_size;
  default: return cluster_sreg(c, id);
  }
}

static uint64_t sym_addr(const Cta *c, const EmArg *a) {
  if (a->param) return a->sym >= 0 && a->sym < c->f->nparams ? EM_PARAM_GENERIC + c->f->params[a->sym].offset : 0;
  if (a->sym < 0 || a->sym >= c->m->nglobals) return 0;
  const EmGlobal *g = &c->m->globals[a->sym];
  if (g->space == ES_SHARED) return g->offset; /* a .shared address (cvta.shared makes it generic) */
  return (uint64_t)(uintptr_t)g->init;
}

/* The raw bits of a source operand, as a value of type ty. */
uint64_t em_src(const Cta *c, const Thr *t, const EmArg *a, EmType ty) {
  switch (a->kind) {
  case EA_REG: {
    uint64_t v = t->r[a->reg];
    if (v == EM_WG_POISON) /* the hardware may still be writing it */
      em_fail((Cta *)c, t, &c->f->ins[t->pc],
              "reads %s, an accumulator of a wgmma.mma_async not yet waited for (wgmma.wait_group)",
              c->f->reg_name[a->reg]);
    else if (v == EM_TC_POISON)
      em_fail((Cta *)c, t, &c->f->ins[t->pc], "reads %s, a destination of a tcgen05.ld not yet waited for (tcgen05.wait::ld)",
              c->f->reg_name[a->reg]);
    if (ty == ET_PRED) v = v != 0;
    return a->neg ? !v : v;
  }
  case EA_IMM:
    if (a->fimm) {
      if (ty == ET_F64) return a->f32imm ? em_bits_of_f64(em_f32_of((uint64_t)a->imm)) : (uint64_t)a->imm;
      if (ty == ET_F32) return a->f32imm ? (uint64_t)a->imm & 0xffffffffu : em_bits_of_f32((float)em_f64_of((uint64_t)a->imm));
      return (uint64_t)a->imm;
    }
    return (uint64_t)a->imm & em_mask_of(em_type_bits(ty));
  case EA_SREG: return sreg(c, t, a->reg);
  case EA_SYM: return sym_addr(c, a);
  default: return 0;
  }
}

void em_dst(Thr *t, const EmArg *a, EmType ty, uint64_t v) {
  if (a->kind != EA_REG) return; /* `_` */
  t->r[a->reg] = ty == ET_PRED ? (v != 0) : v & em_mask_of(em_type_bits(ty));
}

/* The address of a memory operand ([reg + imm], [sym + imm]); false (with
 * a report) for anything else. */
bool em_addr_of(Cta *c, Thr *t, const EmIns *in, const EmArg *ad, uint64_t *out) {
  if (ad->kind == EA_ADDR && ad->reg >= 0) *out = t->r[ad->reg] + (uint64_t)ad->imm;
  else if ((ad->kind == EA_ADDR || ad->kind == EA_SYM) && ad->sym >= 0) *out = sym_addr(c, ad) + (uint64_t)ad->imm;
  else {
    em_fail(c, t, in, "not a memory address operand");
    return false;
  }
  return true;
}
