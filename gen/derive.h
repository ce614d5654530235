/* derive.h: the model pass that adds what code generation needs for structured ops and for
 * `autogen:`, as torchgen does before it generates code (docs/derive.md).
 *
 *   - structured links: an op with `structured_delegate: X` points at X (structured_out); X, a
 *     structured out op (structured_is_out), lists the ops that delegate to it (delegates);
 *   - autogen: every name an op lists under `autogen:` becomes a new op of the model, its
 *     schema derived the way torchgen's native_function_generation.py derives it (an out
 *     variant, or the functional variant of an in-place or mutable op), its yaml position the
 *     autogen item's; then the groups are rebuilt so the new ops join their groups;
 *   - C facts: each op's C names, the kernel the generator writes for it, its kernel keys.
 */
#ifndef SG_DERIVE_H
#define SG_DERIVE_H

#include "model.h"
#include "strmap.h"

/* Where a composite kernel (sg_op_c.composite) takes one argument of the op it calls (the
 * op's structured_out or autogen_from) from. */
typedef enum sg_call_from {
    SG_CALL_ARG,       /* the caller's argument `arg`, passed on */
    SG_CALL_DTYPE_OF,  /* the dtype of the caller's out argument `arg` (an option torchgen's out
                          variants drop: arange.out has no dtype) */
    SG_CALL_DEVICE_OF, /* its device */
    SG_CALL_NULL,      /* absent: an optional or a generator the caller lacks */
    SG_CALL_STRIDED,   /* a layout the caller lacks: strided */
    SG_CALL_FALSE,     /* a pin_memory the caller lacks: false */
    SG_CALL_OWN,       /* the kernel's own: an out argument of a structured out op, which the
                          kernel allocates (or, in place, its self) */
} sg_call_from;

typedef struct sg_call_arg {
    uint8_t  from; /* sg_call_from */
    uint32_t arg;  /* the caller's argument, for the first three */
} sg_call_arg;

/* What code generation needs of an op (sg_op.c), worked out once by sg_model_derive
 * (derive_c.c; docs/derive.md, "C facts"). Templates read it through the model. */
typedef struct sg_op_c {
    const char  *cname;        /* "aten_add_Tensor": ns_name_overload */
    const char **arg_cnames;   /* per argument: its C parameter's name, unique in the op */
    const char **ret_cnames;   /* per return: its result pointer's name ("ret", "ret_values") */
    const char  *composite;    /* the kernel the generator writes for it: "structured", "out",
                                  "out_inplace", "functional"; NULL where none */
    const sg_op *callee;       /* with composite: the op it calls (structured_out or
                                  autogen_from) */
    const sg_call_arg *callee_args; /* with composite: per argument of callee */
    const char **kernel_keys;  /* the keys it has kernels for (dispatch keys, each once, or
                                  CompositeImplicitAutograd where implicit) */
    uint32_t     nkernel_keys;
    bool         implicit;         /* CompositeImplicitAutograd: no dispatch, no delegate */
    bool         backend_kernel;   /* a kernel for a backend key, or a structured delegate */
    bool         composite_kernel; /* a kernel for a Composite* key */
    bool         backend_must_implement; /* backend_kernel and not composite_kernel: a new
                                            backend's own kernel is needed (PyTorch's
                                            RegistrationDeclarations) */
    const char  *signature;    /* "ttS>t": argument letters, '>', result letters (types.md) */
    const char  *boxed_name;   /* its boxing adapter's name after "LIB_": "boxed_ttS_t" */
} sg_op_c;

/* Run after sg_model_group and sg_validate succeeded. Sets the structured links of every op
 * and adds the ops that `autogen:` asks for (sg_op.autogen_from is set on those). Running it
 * again adds nothing new. Errors go to d (SG-401..SG-406, docs/derive.md; and SG-301 should a
 * new op clash in its group); returns the number of errors added. */
int sg_model_derive(sg_model *m, sg_diag *d);

/* The C facts alone (sg_model_derive's last step): sets sg_op.c on every parsed op. Errors:
 * SG-407 (two ops' C names meet), SG-408 (a C name in a reserved space), SG-414 (a composite
 * kernel lacks a value for an argument of the op it calls). Returns their number. */
int sg_model_derive_c(sg_model *m, sg_diag *d);

/* Whether s is a C or C++ keyword, or a name the runtime's headers define (bool, NULL,
 * offsetof, ...): the words a generated parameter never takes (derive_c.c). */
bool sg_derive_c_reserved_word(const char *s);

/* Whether s is a C identifier (lower: of lower-case letters, digits and _ only). */
bool sg_derive_c_identifier(const char *s, bool lower);

/* Why a C identifier cannot name a function that user code defines next to the generated files
 * and that they declare and call (a when_c predicate, a kernel named under `dispatch:`), or
 * NULL: the runtime's space (sg_, SG_), the implementation's (a leading _), keywords and what
 * the runtime's headers define, types (_t), main. */
const char *sg_derive_user_fn_reserved(const char *name);

/* Whether any op's C names meet those the generated library `lib` (--lib) declares itself:
 * LIB_init, LIB_find, LIB_ops, LIB_nops, LIB_boxed_*, the guard LIB_H. Errors (SG-409) go to
 * d; returns their number. Run by code generation, which knows the library's name. */
int sg_derive_check_lib(const sg_model *m, const char *lib, sg_diag *d);

/* Whether the generated library `lib` declares `name` at file scope itself: an op's C name
 * with one of the suffixes the templates add (docs/derive.md, "Names that compile"), or
 * LIB_init, LIB_find, LIB_ops, LIB_nops, LIB_boxed_*, the guard LIB_H. cnames maps every op's
 * C name (sg_op_c.cname) to its op. */
bool sg_derive_c_declares(const sg_strmap *cnames, const char *lib, const char *name);

#endif
