/* kernels.h: the kernels a schema file names under `dispatch:`, registered by the generated
 * library (`schemagen --kernel-keys`, docs/cli.md). Private to gen/.
 *
 * For every op whose dispatch table lists a kernel under a selected key, the generated
 * library declares the kernel once, with the op's kernel type (LIB_kernels.h: `ns_op_fn
 * name;`), and LIB_init registers it at that key through the op's typed _register function.
 * A kernel defined with another C type then fails to compile in any file that includes the
 * library's header; one that is missing fails to link, naming it.
 *
 * The plan is made on a derived model (sg_model_derive: the ops' C names) and checks what
 * would otherwise surface as confusing C errors, each at the dispatch entry it is about:
 *   SG-410  the kernel's name is no C function name the library may declare
 *   SG-411  a selected key the op lists that the runtime has no key for
 *   SG-412  one kernel name for ops of different C types
 *   SG-413  a kernel for an op the typed API cannot express (varargs, varret)
 */
#ifndef SG_KERNELS_H
#define SG_KERNELS_H

#include "model.h"

/* The keys --kernel-keys selects: `all`, or names. */
typedef struct sg_kernel_keys {
    bool         all;
    const char **names; /* each once, in the order given (pointers into text) */
    uint32_t     n;
    char        *text;  /* the list's copy the names point into */
} sg_kernel_keys;

/* Parses LIST ("CPU,CompositeExplicitAutograd", "all") into sel. Each name must be a dispatch
 * key PyTorch or the runtime knows (SparseCPU is one: an op that lists it is refused later,
 * SG-411); `all` stands alone. Returns 0, or -1 with a message in msg (the caller's usage
 * error) or out of memory (msg empty). */
int  sg_kernel_keys_parse(sg_kernel_keys *sel, const char *list, char *msg, size_t msglen);
void sg_kernel_keys_free(sg_kernel_keys *sel);

/* One registration: op (its index in the model's ops) at key. */
typedef struct sg_kernel_reg {
    uint32_t    op;
    const char *key;      /* "CPU" */
    const char *constant; /* "SG_KEY_CPU" */
} sg_kernel_reg;

/* One kernel: its name, the op whose kernel type declares it (the first that names it), and
 * its registrations in model order (then the order of the dispatch table). */
typedef struct sg_kernel {
    const char    *name;
    uint32_t       type_op;
    sg_pos         pos;   /* where it is first named */
    sg_kernel_reg *regs;
    uint32_t       nregs;
} sg_kernel;

typedef struct sg_kernel_set {
    sg_arena    *arena;
    const char **keys;  /* the selected keys (`all`: every key the runtime has), as templates
                           see them in kernel_keys */
    uint32_t     nkeys;
    sg_kernel   *items; /* in the order they are first named */
    uint32_t     n;
} sg_kernel_set;

/* Plans the kernels of m (derived) that sel selects, for the library lib. Errors (SG-410..
 * SG-413, docs/derive.md) go to d; returns their number. set is to be freed in any case. */
int  sg_kernels_plan(sg_kernel_set *set, const sg_model *m, const sg_kernel_keys *sel,
                     const char *lib, sg_diag *d);
void sg_kernels_free(sg_kernel_set *set);

/* The runtime's constant of a key that takes kernels ("SG_KEY_CPU"), or NULL: a key the
 * runtime lacks, or Undefined (gen/schema/sg_key_table.h). */
const char *sg_kernel_key_constant(const char *name);

#endif
