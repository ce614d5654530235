/* sg_type_table.h: the one table of schema-type facts. How each schema type maps to C, which
 * boxed tags it travels as and its letter in a signature string, for the generator (its model
 * gives the templates each family's row), the runtime (which tags a boxed argument may carry,
 * what a signature letter boxes) and docs/types.md (a test holds it to this table).
 *
 * One row per type family:
 *
 *   X(ID, name, letter, ret_letter, param, result, tags, spellings)
 *
 *   ID          the family's enum value, SG_FAM_##ID
 *   name        its name in the model (arg.family) and in docs/types.md
 *   letter      its letter in a signature string (sg_call_boxed_sig: one per argument)
 *   ret_letter  its letter as a result ('a': the result is an sg_any)
 *   param       the typed API's C parameter type for an argument of the family
 *   result      the C type a result's out-pointer points to ("sg_any" where no typed one)
 *   tags        the sg_any tags a boxed argument may carry, SG_TAG(x) each for SG_ANY_x; none
 *               listed: any tag. An optional type (T?) takes SG_ANY_NONE as well, and a list
 *               of fixed size (int[2]) one SG_ANY_INT, which PyTorch broadcasts.
 *   spellings   the schema types of the family, SG_SPELL(KIND, SHAPE) each for SG_TY_##KIND
 *               in the shape SG_SHAPE_##SHAPE. A type no row spells is of family ANY.
 *
 * The expander defines SG_TAG and SG_SPELL as it needs them (a list of strings, a bit set, a
 * case label) and undefines them after. Rows with no typed result have ret_letter 'a' and
 * result "sg_any". The rows' order is the documentation's. */
#ifndef SG_TYPE_TABLE_H
#define SG_TYPE_TABLE_H

#include "sg_schema.h"

#define SG_TYPE_FAMILIES(X)                                                                   \
    X(TENSOR, "tensor", 't', 't', "sg_tensor *", "sg_tensor *",                               \
      SG_TAG(TENSOR), SG_SPELL(TENSOR, PLAIN))                                                \
    X(OPT_TENSOR, "opt_tensor", 'T', 'T', "sg_tensor *", "sg_tensor *",                       \
      SG_TAG(TENSOR), SG_SPELL(TENSOR, OPT))                                                  \
    X(TENSOR_LIST, "tensor_list", 'l', 'l', "sg_tensor_list", "sg_tensor_list",               \
      SG_TAG(TENSOR_LIST), SG_SPELL(TENSOR, LIST))                                            \
    X(OPT_TENSOR_LIST, "opt_tensor_list", 'L', 'a', "sg_tensor_list", "sg_any",               \
      SG_TAG(OPT_TENSOR_LIST) SG_TAG(TENSOR_LIST), SG_SPELL(TENSOR, LIST_OPT))                \
    X(OPT_TENSOR_LIST_OPT, "opt_tensor_list_opt", 'a', 'a', "const sg_any *", "sg_any",       \
      SG_TAG(TENSOR_LIST) SG_TAG(OPT_TENSOR_LIST),                                            \
      SG_SPELL(TENSOR, OPT_LIST) SG_SPELL(TENSOR, OPT_LIST_OPT))                              \
    X(INT, "int", 'i', 'i', "int64_t", "int64_t", SG_TAG(INT),                                \
      SG_SPELL(INT, PLAIN) SG_SPELL(SYMINT, PLAIN) SG_SPELL(DEVICE_INDEX, PLAIN)              \
      SG_SPELL(QSCHEME, PLAIN))                                                               \
    X(OPT_INT, "opt_int", 'I', 'a', "const int64_t *", "sg_any", SG_TAG(INT),                 \
      SG_SPELL(INT, OPT) SG_SPELL(SYMINT, OPT) SG_SPELL(DEVICE_INDEX, OPT)                    \
      SG_SPELL(QSCHEME, OPT))                                                                 \
    X(FLOAT, "float", 'f', 'f', "double", "double", SG_TAG(FLOAT),                            \
      SG_SPELL(FLOAT, PLAIN) SG_SPELL(SYMFLOAT, PLAIN))                                       \
    X(OPT_FLOAT, "opt_float", 'F', 'a', "const double *", "sg_any", SG_TAG(FLOAT),            \
      SG_SPELL(FLOAT, OPT) SG_SPELL(SYMFLOAT, OPT))                                           \
    X(BOOL, "bool", 'b', 'b', "bool", "bool", SG_TAG(BOOL),                                   \
      SG_SPELL(BOOL, PLAIN) SG_SPELL(SYMBOOL, PLAIN))                                         \
    X(OPT_BOOL, "opt_bool", 'B', 'a', "const bool *", "sg_any", SG_TAG(BOOL),                 \
      SG_SPELL(BOOL, OPT) SG_SPELL(SYMBOOL, OPT))                                             \
    X(COMPLEX, "complex", 'c', 'a', "sg_complex", "sg_any", SG_TAG(COMPLEX),                  \
      SG_SPELL(COMPLEX, PLAIN))                                                               \
    X(OPT_COMPLEX, "opt_complex", 'C', 'a', "const sg_complex *", "sg_any", SG_TAG(COMPLEX),  \
      SG_SPELL(COMPLEX, OPT))                                                                 \
    X(STR, "str", 's', 'a', "const char *", "sg_any", SG_TAG(STR),                            \
      SG_SPELL(STR, PLAIN) SG_SPELL(DIMNAME, PLAIN))                                          \
    X(OPT_STR, "opt_str", 's', 'a', "const char *", "sg_any", SG_TAG(STR),                    \
      SG_SPELL(STR, OPT) SG_SPELL(DIMNAME, OPT))                                              \
    X(SCALAR, "scalar", 'S', 'S', "sg_scalar", "sg_scalar",                                   \
      SG_TAG(BOOL) SG_TAG(INT) SG_TAG(FLOAT) SG_TAG(COMPLEX), SG_SPELL(SCALAR, PLAIN))        \
    X(OPT_SCALAR, "opt_scalar", 'Q', 'a', "const sg_scalar *", "sg_any",                      \
      SG_TAG(BOOL) SG_TAG(INT) SG_TAG(FLOAT) SG_TAG(COMPLEX), SG_SPELL(SCALAR, OPT))          \
    X(DTYPE, "dtype", 'd', 'd', "sg_dtype", "sg_dtype", SG_TAG(DTYPE),                        \
      SG_SPELL(SCALAR_TYPE, PLAIN))                                                           \
    X(OPT_DTYPE, "opt_dtype", 'D', 'a', "const sg_dtype *", "sg_any", SG_TAG(DTYPE),          \
      SG_SPELL(SCALAR_TYPE, OPT))                                                             \
    X(LAYOUT, "layout", 'y', 'a', "sg_layout", "sg_any", SG_TAG(LAYOUT),                      \
      SG_SPELL(LAYOUT, PLAIN))                                                                \
    X(OPT_LAYOUT, "opt_layout", 'Y', 'a', "const sg_layout *", "sg_any", SG_TAG(LAYOUT),      \
      SG_SPELL(LAYOUT, OPT))                                                                  \
    X(MEMORY_FORMAT, "memory_format", 'm', 'a', "sg_memory_format", "sg_any",                 \
      SG_TAG(MEMORY_FORMAT), SG_SPELL(MEMORY_FORMAT, PLAIN))                                  \
    X(OPT_MEMORY_FORMAT, "opt_memory_format", 'M', 'a', "const sg_memory_format *", "sg_any", \
      SG_TAG(MEMORY_FORMAT), SG_SPELL(MEMORY_FORMAT, OPT))                                    \
    X(DEVICE, "device", 'v', 'a', "sg_device", "sg_any", SG_TAG(DEVICE),                      \
      SG_SPELL(DEVICE, PLAIN))                                                                \
    X(OPT_DEVICE, "opt_device", 'V', 'a', "const sg_device *", "sg_any", SG_TAG(DEVICE),      \
      SG_SPELL(DEVICE, OPT))                                                                  \
    X(GENERATOR, "generator", 'g', 'a', "sg_generator *", "sg_any", SG_TAG(GENERATOR),        \
      SG_SPELL(GENERATOR, PLAIN) SG_SPELL(GENERATOR, OPT))                                    \
    X(OPAQUE, "opaque", 'o', 'a', "void *", "sg_any", SG_TAG(OPAQUE),                         \
      SG_SPELL(STORAGE, PLAIN) SG_SPELL(STORAGE, OPT) SG_SPELL(STREAM, PLAIN)                 \
      SG_SPELL(STREAM, OPT))                                                                  \
    X(INT_LIST, "int_list", 'n', 'a', "sg_int_list", "sg_any", SG_TAG(INT_LIST),              \
      SG_SPELL(INT, LIST) SG_SPELL(SYMINT, LIST))                                             \
    X(OPT_INT_LIST, "opt_int_list", 'N', 'a', "const sg_int_list *", "sg_any",                \
      SG_TAG(INT_LIST), SG_SPELL(INT, OPT_LIST) SG_SPELL(SYMINT, OPT_LIST))                   \
    X(FLOAT_LIST, "float_list", 'r', 'a', "sg_float_list", "sg_any", SG_TAG(FLOAT_LIST),      \
      SG_SPELL(FLOAT, LIST))                                                                  \
    X(OPT_FLOAT_LIST, "opt_float_list", 'R', 'a', "const sg_float_list *", "sg_any",          \
      SG_TAG(FLOAT_LIST), SG_SPELL(FLOAT, OPT_LIST))                                          \
    X(BOOL_LIST, "bool_list", 'k', 'a', "sg_bool_list", "sg_any", SG_TAG(BOOL_LIST),          \
      SG_SPELL(BOOL, LIST))                                                                   \
    X(OPT_BOOL_LIST, "opt_bool_list", 'K', 'a', "const sg_bool_list *", "sg_any",             \
      SG_TAG(BOOL_LIST), SG_SPELL(BOOL, OPT_LIST))                                            \
    X(SCALAR_LIST, "scalar_list", 'z', 'a', "sg_scalar_list", "sg_any", SG_TAG(LIST),         \
      SG_SPELL(SCALAR, LIST))                                                                 \
    X(OPT_SCALAR_LIST, "opt_scalar_list", 'Z', 'a', "const sg_scalar_list *", "sg_any",       \
      SG_TAG(LIST), SG_SPELL(SCALAR, OPT_LIST))                                               \
    X(STR_LIST, "str_list", 'w', 'a', "sg_str_list", "sg_any", SG_TAG(LIST),                  \
      SG_SPELL(STR, LIST) SG_SPELL(DIMNAME, LIST))                                            \
    X(OPT_STR_LIST, "opt_str_list", 'W', 'a', "const sg_str_list *", "sg_any", SG_TAG(LIST),  \
      SG_SPELL(STR, OPT_LIST) SG_SPELL(DIMNAME, OPT_LIST))                                    \
    X(ANY, "any", 'a', 'a', "const sg_any *", "sg_any", , )

/* Where a family's spellings put their base type: T, T?, T[], T?[], T[]?, T?[]?. */
typedef enum sg_type_shape {
    SG_SHAPE_PLAIN,
    SG_SHAPE_OPT,
    SG_SHAPE_LIST,
    SG_SHAPE_LIST_OPT,
    SG_SHAPE_OPT_LIST,
    SG_SHAPE_OPT_LIST_OPT,
    SG_SHAPE__COUNT
} sg_type_shape;

#define SG_FAM_ENUM(id, ...) SG_FAM_##id,
typedef enum sg_type_family_id { SG_TYPE_FAMILIES(SG_FAM_ENUM) SG_FAM__COUNT } sg_type_family_id;
#undef SG_FAM_ENUM

/* A family's row as data, for code that walks the table (the generator's model, the docs
 * test): tags are "SG_ANY_x" names, NULL-ended (none: any tag). */
typedef struct sg_type_family_row {
    const char *name;
    char        letter, ret_letter;
    const char *param, *result;
    const char *const *tags;
} sg_type_family_row;

extern const sg_type_family_row sg_type_family_rows[SG_FAM__COUNT];

/* The family of a schema type (SG_FAM_ANY where no row spells it). */
sg_type_family_id sg_type_family_of(const sg_type *t);
/* The family whose signature letter is c (ret: as a result), or -1 where none. A letter
 * several families share ('s', 'a') gives the first of them. */
int sg_type_family_of_letter(char c, bool ret);
/* The shape and base kind of t: false where t has no shape of the table (Tensor[][]). */
bool sg_type_shape_of(const sg_type *t, sg_type_shape *shape, sg_type_kind *base);

#endif
