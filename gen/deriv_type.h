/* deriv_type.h: a backward formula of derivatives.yaml (a C++ expression, formula.h) typed and
 * resolved against the model: each name bound to a gradient, an input, a result or a constant,
 * each call to an op of the schemas (aten's, or the autograd helpers' ops), each C++ operator on
 * tensors to the aten op it stands for, each property of a tensor (sizes, dtype, ...) named.
 * What cannot be resolved is said, with the formula's byte where it is: such a formula is not
 * translated, and its op is not differentiable with respect to those inputs. Private to gen/.
 *
 * Types are the type table's families (sg_type_table.h), plus the few values C++ formulas use
 * that no schema type names: tensor options, nullopt, and tuples of tensors. */
#ifndef SG_DERIV_TYPE_H
#define SG_DERIV_TYPE_H

#include "deriv.h"
#include "formula.h"
#include "sg_type_table.h"
#include "strmap.h"

enum {
    SG_FT_OPTIONS = SG_FAM__COUNT, /* x.options(): dtype, layout, device (TensorOptions) */
    SG_FT_NONE,                    /* std::nullopt, for any optional */
    SG_FT_TUPLE,                   /* several tensors (a key naming several inputs) */
    SG_FT_GEOMETRY,                /* TensorGeometry(x): sizes, strides, offset */
};

typedef enum sg_dt_what {
    SG_DT_GRAD,      /* the gradient of result idx (grad, grads[i], grad_NAME) */
    SG_DT_INPUT,     /* argument idx of the op, as saved */
    SG_DT_RESULT,    /* result idx of the op, as saved */
    SG_DT_MASK,      /* grad_input_mask: which inputs of the key need a gradient */
    SG_DT_CONST,     /* text: a literal as written, or a named constant (true, kFloat, ...) */
    SG_DT_OP,        /* op's call: kids one per argument of its schema, NULL: the default */
    SG_DT_PROP,      /* text: a property of kids[0] (sizes, size, numel, dim, scalar_type, ...);
                      * kids[1] its argument where it has one; to_args_sizes and
                      * to_args_scalartypes of a Tensor[] input (int lists) */
    SG_DT_CBIN,      /* text: a C operator on ints or bools, kids[0] and kids[1] */
    SG_DT_CUNARY,    /* text: "-" or "!" on an int or a bool */
    SG_DT_TERNARY,   /* kids[0] ? kids[1] : kids[2] */
    SG_DT_LIST,      /* a brace list of ints: kids */
    SG_DT_INDEX,     /* kids[0][kids[1]]: an int of a list, a bool of the mask */
    SG_DT_UNDEFINED, /* Tensor(): an undefined tensor (or a tuple of them) */
    SG_DT_GEOMETRY,  /* TensorGeometry(kids[0]) */
} sg_dt_what;

typedef struct sg_dtx sg_dtx;
struct sg_dtx {
    sg_dt_what   what;
    int          type;   /* sg_type_family_id or SG_FT_* */
    const sg_fx *x;      /* where it is in the formula */
    const sg_op *op;     /* SG_DT_OP */
    uint32_t     idx;    /* SG_DT_GRAD, _INPUT, _RESULT; SG_DT_UNDEFINED: how many (a tuple) */
    const char  *text;
    sg_dtx     **kids;
    uint32_t     nkids;
};

/* The ops a formula may call, by bare name: aten's and the helpers' (namespace `autograd`),
 * without out= variants. */
typedef struct sg_dt_ops {
    sg_strmap by_name; /* name -> sg_dt_oplist */
} sg_dt_ops;

int sg_dt_ops_init(sg_dt_ops *o, sg_arena *a, const sg_model *m);

/* Types formula f of entry dv (a backward key: f->tree parsed) into *out. false where it cannot
 * be resolved: err says where (a byte of f->text) and what. */
bool sg_dt_formula(sg_arena *a, const sg_dt_ops *ops, const sg_deriv *dv,
                   const sg_deriv_formula *f, const sg_fx *tree, sg_dtx **out, sg_fx_error *err);

/* d as text: ops with their namespace and overload, each argument in the op's order (`_` for
 * a default), gradients as grads[i], results as resultI (--emit=derivatives, tests). */
void sg_dt_print(sg_buf *b, const sg_dtx *d, const sg_deriv *dv);

/* The C of a named constant of the formulas (true, kFloat, M_PI, ...: an SG_DT_CONST's text),
 * or NULL for a literal. */
const char *sg_dt_const_c(const char *name);

/* "Tensor", "int[]", "TensorOptions", ...: a type for messages. */
const char *sg_dt_type_name(int type);
/* Whether a tensor property a formula reads (x.sizes(), x.options(), ...) is one PyTorch keeps
 * in a node in place of the tensor (so the node keeps x's metadata only). */
bool        sg_dt_prop_is_meta(const char *name);

#endif
