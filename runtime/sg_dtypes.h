/* sg_dtypes.h: the one table of dtype facts, and the sg_dtype enum made from it.
 *
 * SG_DTYPES(X) calls X once per dtype, in the order of the enum's numbers, with these columns:
 *
 *   X(NAME, NUM, KIND, SIZE, CTYPE, SUF, DL, CU, DIGITS, "name", "c10", "cpp", "meta")
 *
 *   NAME   the enumerator without its prefix: SG_##NAME
 *   NUM    its number, c10::ScalarType's
 *   KIND   one token: BOOL, UINT, SINT (signed integers), FLOAT (float32, float64), REDUCED (the
 *          16-bit floats, which C code stores as bits and computes in float32) or COMPLEX
 *   SIZE   bytes per element
 *   CTYPE  the C type of one element in host memory (sg_half and sg_bf16 hold the bits)
 *   SUF    a short suffix for names of per-dtype code (sum_f32, scan_b8)
 *   DL     the DLPack type code: SG_DL_##DL (sg_dlpack.h)
 *   CU     the CUDA libraries' data type: CUDA_##CU (bool as uint8, whose bits it has)
 *   DIGITS bits of precision, std::numeric_limits<T>::digits (a complex type's component's):
 *          what aten's uniform distribution draws for a floating dtype
 *   name   sg_dtype_name's spelling ("float32")
 *   c10    c10::ScalarType's name, as aten's messages print it ("Float")
 *   cpp    aten's C++ element type, as its messages spell it ("c10::Half", "int64_t")
 *   meta   the same type as typeid names it, in messages of aten's meta functions ("long int")
 *
 * Subsets, for code stamped out once per C type, expand the same rows: SG_DTYPES_INTEGRAL,
 * SG_DTYPES_FLOATING, and SG_DTYPES_WHERE for any union of kinds. Every table indexed by a dtype
 * has SG_DTYPE__END entries; one written by hand (not expanded from here) asserts
 * SG_DTYPE__COUNT beside it, so a new row cannot be forgotten there.
 *
 * Rationale: the numbers are c10::ScalarType's, so values cross to code that speaks PyTorch's C
 * shim (aoti_torch_dtype_float32() == 6) without a table. They are part of the ABI: a row may be
 * added, never renumbered.
 */
#ifndef SG_DTYPES_H
#define SG_DTYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* clang-format off */
#define SG__DTYPE_ROWS(F, X)                                                                                                                             \
    F(X, UINT8,      0,  UINT,    1,  uint8_t, u8,   UINT,    R_8U,   8,  "uint8",      "Byte",          "uint8_t",              "unsigned char"       ) \
    F(X, INT8,       1,  SINT,    1,  int8_t,  i8,   INT,     R_8I,   7,  "int8",       "Char",          "int8_t",               "signed char"         ) \
    F(X, INT16,      2,  SINT,    2,  int16_t, i16,  INT,     R_16I,  15, "int16",      "Short",         "int16_t",              "short int"           ) \
    F(X, INT32,      3,  SINT,    4,  int32_t, i32,  INT,     R_32I,  31, "int32",      "Int",           "int",                  "int"                 ) \
    F(X, INT64,      4,  SINT,    8,  int64_t, i64,  INT,     R_64I,  63, "int64",      "Long",          "int64_t",              "long int"            ) \
    F(X, FLOAT16,    5,  REDUCED, 2,  sg_half, f16,  FLOAT,   R_16F,  11, "float16",    "Half",          "c10::Half",            "c10::Half"           ) \
    F(X, FLOAT32,    6,  FLOAT,   4,  float,   f32,  FLOAT,   R_32F,  24, "float32",    "Float",         "float",                "float"               ) \
    F(X, FLOAT64,    7,  FLOAT,   8,  double,  f64,  FLOAT,   R_64F,  53, "float64",    "Double",        "double",               "double"              ) \
    F(X, COMPLEX64,  9,  COMPLEX, 8,  sg_c64,  c64,  COMPLEX, C_32F,  24, "complex64",  "ComplexFloat",  "c10::complex<float>",  "c10::complex<float>" ) \
    F(X, COMPLEX128, 10, COMPLEX, 16, sg_c128, c128, COMPLEX, C_64F,  53, "complex128", "ComplexDouble", "c10::complex<double>", "c10::complex<double>") \
    F(X, BOOL,       11, BOOL,    1,  bool,    b8,   BOOL,    R_8U,   1,  "bool",       "Bool",          "bool",                 "bool"                ) \
    F(X, BFLOAT16,   15, REDUCED, 2,  sg_bf16, bf16, BFLOAT,  R_16BF, 8,  "bfloat16",   "BFloat16",      "c10::BFloat16",        "c10::BFloat16"       )
/* clang-format on */

/* Every dtype. */
#define SG_DTYPES(X) SG__DTYPE_ROWS(SG__DTYPE_ALL, X)

/* The dtypes of some kinds: each flag 1 keeps the rows of its kind, 0 drops them. */
#define SG_DTYPES_WHERE(X, BOOL_, UINT_, SINT_, FLOAT_, REDUCED_, COMPLEX_) \
    SG__DTYPE_ROWS(SG__DTYPE_SOME,                                           \
                   (X, SG__DTYPE_ALL, BOOL_, UINT_, SINT_, FLOAT_, REDUCED_, COMPLEX_))
/* uint8, int8, int16, int32, int64 (sg_dtype_is_integral without bool) */
#define SG_DTYPES_INTEGRAL(X) SG_DTYPES_WHERE(X, 0, 1, 1, 0, 0, 0)
/* float16, float32, float64, bfloat16 (sg_dtype_is_floating) */
#define SG_DTYPES_FLOATING(X) SG_DTYPES_WHERE(X, 0, 0, 0, 1, 1, 0)
/* As SG_DTYPES_WHERE, calling X(SG_##NAME, CTYPE): the two columns that code stamped out once
 * per C type needs. In C, bool's CTYPE arrives as _Bool (stdbool.h's macro is expanded). */
#define SG_DTYPES_CTYPES_WHERE(X, BOOL_, UINT_, SINT_, FLOAT_, REDUCED_, COMPLEX_) \
    SG__DTYPE_ROWS(SG__DTYPE_SOME,                                                  \
                   (X, SG__DTYPE_PAIR, BOOL_, UINT_, SINT_, FLOAT_, REDUCED_, COMPLEX_))

/* How the subsets work: SG__DTYPE_SOME receives the row and A = (X, CALL, flags); the row's
 * KIND picks its flag, and SG__DTYPE_KEEP1 keeps the CALL of X that SG__DTYPE_KEEP0 drops. */
#define SG__DTYPE_ALL(X, ...)                                 X(__VA_ARGS__)
#define SG__DTYPE_PAIR(X, NAME, NUM, KIND, SIZE, CTYPE, ...) X(SG_##NAME, CTYPE)
#define SG__DTYPE_SOME(A, NAME, NUM, KIND, ...)                                                  \
    SG__DTYPE_SOME_(SG__DTYPE_FLAG_##KIND A, SG__DTYPE_CALL_OF A, SG__DTYPE_X_OF A, NAME, NUM, \
                    KIND, __VA_ARGS__)
#define SG__DTYPE_SOME_(FLAG, CALL, X, ...) SG__DTYPE_CAT(SG__DTYPE_KEEP, FLAG)(CALL(X, __VA_ARGS__))
#define SG__DTYPE_X_OF(X, CALL, ...)    X
#define SG__DTYPE_CALL_OF(X, CALL, ...) CALL
#define SG__DTYPE_FLAG_BOOL(X, C, b, u, s, f, r, c)    b
#define SG__DTYPE_FLAG_UINT(X, C, b, u, s, f, r, c)    u
#define SG__DTYPE_FLAG_SINT(X, C, b, u, s, f, r, c)    s
#define SG__DTYPE_FLAG_FLOAT(X, C, b, u, s, f, r, c)   f
#define SG__DTYPE_FLAG_REDUCED(X, C, b, u, s, f, r, c) r
#define SG__DTYPE_FLAG_COMPLEX(X, C, b, u, s, f, r, c) c
#define SG__DTYPE_CAT(a, b)  SG__DTYPE_CAT_(a, b)
#define SG__DTYPE_CAT_(a, b) a##b
#define SG__DTYPE_KEEP1(x) x
#define SG__DTYPE_KEEP0(x)

/* The element types the CTYPE column names beyond C's own. */
typedef uint16_t sg_half; /* IEEE binary16, as bits */
typedef uint16_t sg_bf16; /* bfloat16, as bits */
#if !defined(__cplusplus) && !defined(__STDC_NO_COMPLEX__)
typedef float _Complex  sg_c64;
typedef double _Complex sg_c128;
#endif

/* ---- the enum ---------------------------------------------------------------------------- */

#define SG__DTYPE_ENUM(NAME, NUM, ...) SG_##NAME = NUM,
#define SG__DTYPE_ONE(...)             +1
typedef enum sg_dtype {
    SG_DTYPES(SG__DTYPE_ENUM)
    SG_DTYPE__END = 16 /* one past the largest; not every number below it is a dtype (a row
                          numbered at or above it fails to compile in types.c's table) */
} sg_dtype;
enum { SG_DTYPE__COUNT = 0 SG_DTYPES(SG__DTYPE_ONE) }; /* how many dtypes there are */

bool        sg_dtype_valid(int dtype);
size_t      sg_dtype_size(sg_dtype t);          /* bytes per element; 0 for an invalid dtype */
const char *sg_dtype_name(sg_dtype t);          /* "float32"; "?" for an invalid dtype */
int         sg_dtype_digits(sg_dtype t);        /* DIGITS: bits of precision; 0 if invalid */
const char *sg_dtype_c10_name(sg_dtype t);      /* "Float", as aten's messages print it */
bool        sg_dtype_is_floating(sg_dtype t);   /* float16, bfloat16, float32, float64 */
bool        sg_dtype_is_complex(sg_dtype t);
bool        sg_dtype_is_integral(sg_dtype t, bool include_bool);
/* PyTorch's canCast, whether a result of `from` may be written into a tensor of `to`: no
 * complex into non-complex, no floating into integral, nothing non-bool into bool. */
bool        sg_dtype_can_cast(sg_dtype from, sg_dtype to);

#ifdef __cplusplus
}
#endif
#endif
