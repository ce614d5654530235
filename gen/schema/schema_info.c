/* schema_info.c: the tables of the schema language. One table per fact: the lexer, the parser,
 * the printer and the emitters all read these instead of switching over kinds themselves. */
#include "schema_info.h"

#include <string.h>

#define L  SG_TYF_LEAF
#define A  SG_TYF_ALIASABLE /* c10 reads an annotation after it */
#define TG SG_TYF_TORCHGEN
#define C  SG_TYF_CALL

const sg_type_info sg_type_infos[SG_TY__COUNT] = {
    [SG_TY_TENSOR]              = {"Tensor", L | A | TG},
    [SG_TY_INT]                 = {"int", L | A | TG},
    [SG_TY_SYMINT]              = {"SymInt", L | A | TG},
    [SG_TY_FLOAT]               = {"float", L | A | TG},
    [SG_TY_SYMFLOAT]            = {"SymFloat", L | A},
    [SG_TY_BOOL]                = {"bool", L | A | TG},
    [SG_TY_SYMBOOL]             = {"SymBool", L | A | TG},
    [SG_TY_COMPLEX]             = {"complex", L | A},
    [SG_TY_STR]                 = {"str", L | A | TG},
    [SG_TY_SCALAR]              = {"Scalar", L | A | TG},
    [SG_TY_SCALAR_TYPE]         = {"ScalarType", L | A | TG},
    [SG_TY_LAYOUT]              = {"Layout", L | A | TG},
    [SG_TY_MEMORY_FORMAT]       = {"MemoryFormat", L | A | TG},
    [SG_TY_DEVICE]              = {"Device", L | A | TG},
    [SG_TY_DEVICE_INDEX]        = {"DeviceIndex", L | A | TG},
    [SG_TY_GENERATOR]           = {"Generator", L | A | TG},
    [SG_TY_DIMNAME]             = {"Dimname", L | A | TG},
    [SG_TY_DIMVECTOR]           = {"DimVector", L | A | TG},
    [SG_TY_STORAGE]             = {"Storage", L | A | TG},
    [SG_TY_STREAM]              = {"Stream", L | A | TG},
    [SG_TY_QSCHEME]             = {"QScheme", L | A | TG},
    [SG_TY_QUANTIZER]           = {"Quantizer", L | A},
    [SG_TY_CONST_QUANTIZER_PTR] = {"ConstQuantizerPtr", L | A | TG},
    [SG_TY_GRAPH_MODULE]        = {"GraphModule", L | A | TG},
    [SG_TY_CAPSULE]             = {"Capsule", L | A},
    [SG_TY_ANY]                 = {"Any", L | A},
    [SG_TY_ANY_CLASS]           = {"AnyClassType", L | A},
    [SG_TY_ANY_ENUM]            = {"AnyEnumType", L | A},
    [SG_TY_NONE]                = {"NoneType", L | A},
    [SG_TY_VAR]                 = {NULL, A},
    [SG_TY_CLASS]               = {NULL, 0},
    [SG_TY_OPTIONAL]            = {NULL, 0},
    [SG_TY_LIST]                = {NULL, A},
    [SG_TY_TUPLE]               = {NULL, 0},
    [SG_TY_DICT]                = {"Dict", A | C},
    [SG_TY_FUTURE]              = {"Future", C},
    [SG_TY_RREF]                = {"RRef", C},
    [SG_TY_AWAIT]               = {"Await", C},
    [SG_TY_UNION]               = {"Union", A | C},
};

#undef L
#undef A
#undef TG
#undef C

const char *const sg_schema_kind_names[SG_KIND__COUNT] = {
    [SG_KIND_FUNCTIONAL] = "functional",
    [SG_KIND_INPLACE]    = "inplace",
    [SG_KIND_OUT]        = "out",
    [SG_KIND_MUTABLE]    = "mutable",
    [SG_KIND_SCRATCH]    = "scratch",
};

/* Named constants a default may use, the type each belongs to and its value: facts from
 * PyTorch's schema parser and c10's enums (Reduction, MemoryFormat, Layout, QScheme,
 * ScalarType: the number each enumerator has in c10). */
static const struct {
    const char  *name;
    sg_type_kind type;
    int64_t      value;
} constants[] = {
    {"Mean", SG_TY_INT, 1}, {"Sum", SG_TY_INT, 2},
    {"contiguous_format", SG_TY_MEMORY_FORMAT, 0}, {"preserve_format", SG_TY_MEMORY_FORMAT, 1},
    {"channels_last", SG_TY_MEMORY_FORMAT, 2}, {"channels_last_3d", SG_TY_MEMORY_FORMAT, 3},
    {"strided", SG_TY_LAYOUT, 0}, {"sparse_coo", SG_TY_LAYOUT, 1},
    {"sparse_csr", SG_TY_LAYOUT, 2}, {"_mkldnn", SG_TY_LAYOUT, 3},
    {"sparse_csc", SG_TY_LAYOUT, 4}, {"sparse_bsr", SG_TY_LAYOUT, 5},
    {"sparse_bsc", SG_TY_LAYOUT, 6}, {"jagged", SG_TY_LAYOUT, 7},
    {"per_tensor_affine", SG_TY_QSCHEME, 0}, {"per_channel_affine", SG_TY_QSCHEME, 1},
    {"per_tensor_symmetric", SG_TY_QSCHEME, 2}, {"per_channel_symmetric", SG_TY_QSCHEME, 3},
    {"per_channel_affine_float_qparams", SG_TY_QSCHEME, 4},
    {"uint8", SG_TY_SCALAR_TYPE, 0}, {"int8", SG_TY_SCALAR_TYPE, 1},
    {"int16", SG_TY_SCALAR_TYPE, 2}, {"int32", SG_TY_SCALAR_TYPE, 3},
    {"int64", SG_TY_SCALAR_TYPE, 4}, {"uint16", SG_TY_SCALAR_TYPE, 27},
    {"uint32", SG_TY_SCALAR_TYPE, 28}, {"uint64", SG_TY_SCALAR_TYPE, 29},
    {"float16", SG_TY_SCALAR_TYPE, 5}, {"float32", SG_TY_SCALAR_TYPE, 6},
    {"float64", SG_TY_SCALAR_TYPE, 7}, {"bfloat16", SG_TY_SCALAR_TYPE, 15},
    {"complex32", SG_TY_SCALAR_TYPE, 8}, {"complex64", SG_TY_SCALAR_TYPE, 9},
    {"complex128", SG_TY_SCALAR_TYPE, 10}, {"bool", SG_TY_SCALAR_TYPE, 11},
    {"byte", SG_TY_SCALAR_TYPE, 0}, {"char", SG_TY_SCALAR_TYPE, 1},
    {"short", SG_TY_SCALAR_TYPE, 2}, {"int", SG_TY_SCALAR_TYPE, 3},
    {"long", SG_TY_SCALAR_TYPE, 4}, {"half", SG_TY_SCALAR_TYPE, 5},
    {"float", SG_TY_SCALAR_TYPE, 6}, {"double", SG_TY_SCALAR_TYPE, 7},
    {"cfloat", SG_TY_SCALAR_TYPE, 9}, {"cdouble", SG_TY_SCALAR_TYPE, 10},
    {"chalf", SG_TY_SCALAR_TYPE, 8},
    {"float8_e4m3fn", SG_TY_SCALAR_TYPE, 24}, {"float8_e5m2", SG_TY_SCALAR_TYPE, 23},
    {"float8_e4m3fnuz", SG_TY_SCALAR_TYPE, 26}, {"float8_e5m2fnuz", SG_TY_SCALAR_TYPE, 25},
    {"qint8", SG_TY_SCALAR_TYPE, 12}, {"quint8", SG_TY_SCALAR_TYPE, 13},
    {"qint32", SG_TY_SCALAR_TYPE, 14},
    {"quint4x2", SG_TY_SCALAR_TYPE, 16}, {"quint2x4", SG_TY_SCALAR_TYPE, 17},
};

int sg_constant_type(const char *name, size_t len) {
    int64_t unused;
    return sg_constant_lookup(name, len, &unused);
}

int sg_constant_lookup(const char *name, size_t len, int64_t *value) {
    for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++)
        if (strlen(constants[i].name) == len && memcmp(constants[i].name, name, len) == 0) {
            *value = constants[i].value;
            return (int)constants[i].type;
        }
    return -1;
}
