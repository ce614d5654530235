/* cpu.h: what the CPU kernels share: the generated aten API, element types, type promotion,
 * the strided iterator, and each op family's registration. */
#ifndef SG_CPU_H
#define SG_CPU_H

#include "aten.h"
#include "dtype.h"
#include "sg_aten_cpu.h"
#include "sg_iter.h"

#include <string.h>

/* ---- op families ----------------------------------------------------------------------------- */

sg_status sg_cpu_register_pointwise(void);
sg_status sg_cpu_register_reduce(void);
sg_status sg_cpu_register_linalg(void);
sg_status sg_cpu_register_norm(void);
sg_status sg_cpu_register_index(void);
sg_status sg_cpu_register_factory(void);
sg_status sg_cpu_register_views(void);

/* Compute-bound loops are also built for AVX-512 and AVX2, one version picked at load time by
 * the CPU (gcc's target_clones, on x86-64 Linux with an ifunc-capable libc). Not under
 * ThreadSanitizer: gcc instruments the clones' resolver, which runs while the program is being
 * relocated, before TSan's runtime has started, and crashes there. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__) && \
    !defined(__SANITIZE_THREAD__)
#define SG_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SG_CLONES
#endif

/* Registers a typed kernel at key, returning early on failure. */
#define SG_REG_AT(key, op, fn)                                            \
    do {                                                                  \
        sg_status st_ = op##_register(key, fn, NULL);                     \
        if (st_) return st_;                                              \
    } while (0)

/* Registers a typed kernel for CPU. */
#define SG_REG(op, fn) SG_REG_AT(SG_KEY_CPU, op, fn)

/* Registers an op's CompositeImplicitAutograd kernel: a decomposition made of dispatched aten
 * calls, which the generated Autograd kernel runs where an input requires grad while the
 * backends' own kernels serve every other call (docs/autograd.md, "Ops without a formula"). */
#define SG_REG_DECOMP(op, fn) SG_REG_AT(SG_KEY_COMPOSITE_IMPLICIT_AUTOGRAD, op, fn)

/* Registers an op's CompositeExplicitAutograd kernel: one for every backend, as aten registers
 * the ops whose kernel is written over other dispatched ops. */
#define SG_REG_EXPLICIT(op, fn) SG_REG_AT(SG_KEY_COMPOSITE_EXPLICIT_AUTOGRAD, op, fn)

/* Registers a structured op: its meta function (shapes and checks) and its out kernel for CPU. */
#define SG_REG_STRUCTURED(out_op, meta, fn)                               \
    do {                                                                  \
        out_op##_set_meta(meta);                                          \
        SG_REG(out_op, fn);                                               \
    } while (0)

/* Registers a typed kernel for CPU and for Meta: for kernels whose shape work is the iterator's
 * (sg_iter_build) and whose compute is the iterator's loops, which do nothing on Meta, or is
 * otherwise skipped there; the same checks and shapes serve both devices. */
#define SG_REG_CPU_META(op, fn)                                           \
    do {                                                                  \
        SG_REG(op, fn);                                                   \
        sg_status st_ = op##_register(SG_KEY_META, fn, NULL);             \
        if (st_) return st_;                                              \
    } while (0)

#endif
