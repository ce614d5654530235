/* meta.h: what the Meta kernels share. A Meta kernel computes what its op's CPU kernel would
 * return, from the same shape functions (kernels/cpu/sg_*_shape.h and the structured ops' meta
 * functions), and allocates it on the Meta device: no memory, no compute. */
#ifndef SG_META_H
#define SG_META_H

#include "cpu.h"
#include "sg_index_shape.h"

/* An out= tensor on Meta made ready for m, as the CPU's out kernels make theirs: on m's
 * device, of m's dtype (exact) or one it casts to, resized where its shape differs. */
sg_status sg_meta_out_ready(const char *op, sg_tensor *out, const sg_meta *m, bool exact);
/* aten's refusal of an op whose result depends on tensor data. */
sg_status sg_meta_data_dependent(const char *op);

/* Registers every Meta kernel: sg_aten_cpu_init calls it. */
sg_status sg_aten_meta_register(void);
/* Each family's Meta kernels (register.c calls them from sg_aten_cpu_init). */
sg_status sg_meta_register_structured(void);
sg_status sg_meta_register_ops(void);

/* Registers a typed kernel for Meta, returning early on failure. */
#define SG_REG_META(op, fn)                                                \
    do {                                                                   \
        sg_status st_ = op##_register(SG_KEY_META, fn, NULL);              \
        if (st_) return st_;                                               \
    } while (0)

#endif
