/* test_rt_dtypes.c: the SG_DTYPES table (sg_dtypes.h) and what the runtime derives from it:
 * c10's numbers (the ABI), names, sizes against the C types, the kind predicates, the count,
 * and that the subsets kernels stamp code out from hold exactly the dtypes of their kinds. */
#include "check.h"
#include "sg_base.h"
#include "sg_elem.h"

#include <float.h>
#include <math.h>

/* c10::ScalarType's numbers and names, written out here rather than read from the table, so a
 * renumbered or renamed row fails. */
static const struct {
    int         num;
    const char *name;
    size_t      size;
    char        kind; /* b bool, i integral, f floating, c complex */
} c10[] = {
    {0, "uint8", 1, 'i'},      {1, "int8", 1, 'i'},        {2, "int16", 2, 'i'},
    {3, "int32", 4, 'i'},      {4, "int64", 8, 'i'},       {5, "float16", 2, 'f'},
    {6, "float32", 4, 'f'},    {7, "float64", 8, 'f'},     {9, "complex64", 8, 'c'},
    {10, "complex128", 16, 'c'}, {11, "bool", 1, 'b'},     {15, "bfloat16", 2, 'f'},
};
enum { N_C10 = sizeof c10 / sizeof c10[0] };

static void test_abi_numbers(void) {
    CHECK(SG_UINT8 == 0 && SG_INT8 == 1 && SG_INT16 == 2 && SG_INT32 == 3 && SG_INT64 == 4);
    CHECK(SG_FLOAT16 == 5 && SG_FLOAT32 == 6 && SG_FLOAT64 == 7);
    CHECK(SG_COMPLEX64 == 9 && SG_COMPLEX128 == 10 && SG_BOOL == 11 && SG_BFLOAT16 == 15);
    CHECK(SG_DTYPE__END == 16);
    CHECK((int)SG_DTYPE__COUNT == (int)N_C10);
}

static void test_facts_per_number(void) {
    int valid = 0;
    for (int d = -2; d < SG_DTYPE__END + 3; d++) {
        int k = -1;
        for (int i = 0; i < N_C10; i++)
            if (c10[i].num == d) k = i;
        CHECK(sg_dtype_valid(d) == (k >= 0));
        if (k < 0) {
            if (d >= 0) {
                CHECK(sg_dtype_size((sg_dtype)d) == 0);
                CHECK_STR(sg_dtype_name((sg_dtype)d), "?");
                CHECK(!sg_dtype_is_floating((sg_dtype)d) && !sg_dtype_is_complex((sg_dtype)d));
                CHECK(!sg_dtype_is_integral((sg_dtype)d, true));
            }
            continue;
        }
        valid++;
        sg_dtype t = (sg_dtype)d;
        CHECK_STR(sg_dtype_name(t), c10[k].name);
        CHECK(sg_dtype_size(t) == c10[k].size);
        CHECK(sg_dtype_is_floating(t) == (c10[k].kind == 'f'));
        CHECK(sg_dtype_is_complex(t) == (c10[k].kind == 'c'));
        CHECK(sg_dtype_is_integral(t, false) == (c10[k].kind == 'i'));
        CHECK(sg_dtype_is_integral(t, true) == (c10[k].kind == 'i' || c10[k].kind == 'b'));
    }
    CHECK(valid == SG_DTYPE__COUNT);
}

/* The precision a row should state, from its kind and size; for the 16-bit floats, from their
 * conversions: 1 + 2^(1-D) survives a round trip, 1 + 2^-D (a tie) rounds to 1. */
static int reduced_digits(sg_dtype t) {
    for (int d = 2; d < 24; d++) {
        float a = 1.0f + ldexpf(1.0f, 1 - d), b = 1.0f + ldexpf(1.0f, -d);
        float ra = t == SG_FLOAT16 ? sg_half_to_float(sg_float_to_half(a))
                                   : sg_bf16_to_float(sg_float_to_bf16(a));
        float rb = t == SG_FLOAT16 ? sg_half_to_float(sg_float_to_half(b))
                                   : sg_bf16_to_float(sg_float_to_bf16(b));
        if (ra == a && rb == 1.0f) return d;
    }
    return 0;
}
static int expected_digits(sg_dtype t, int size, char kind) {
    switch (kind) {
    case 'b': return 1;
    case 'u': return 8 * size;
    case 's': return 8 * size - 1;
    case 'r': return reduced_digits(t);
    case 'c': return size == 8 ? FLT_MANT_DIG : DBL_MANT_DIG; /* a component's */
    default: return size == 4 ? FLT_MANT_DIG : DBL_MANT_DIG;
    }
}
#define KIND_LETTER_BOOL    'b'
#define KIND_LETTER_UINT    'u'
#define KIND_LETTER_SINT    's'
#define KIND_LETTER_FLOAT   'f'
#define KIND_LETTER_REDUCED 'r'
#define KIND_LETTER_COMPLEX 'c'

/* Each row's SIZE is its CTYPE's size, its number is its enumerator's, and its DIGITS its type's
 * precision. */
static int rows_seen;
#define ROW_CHECK(NAME, NUM, KIND, SIZE, CTYPE, SUF, DL, CU, DIGITS, name, ...)             \
    CHECK(sizeof(CTYPE) == (SIZE) && sg_dtype_size(SG_##NAME) == (SIZE));                  \
    CHECK(SG_##NAME == (NUM));                                                            \
    CHECK_STR(sg_dtype_name(SG_##NAME), name);                                            \
    CHECK((DIGITS) == expected_digits(SG_##NAME, SIZE, KIND_LETTER_##KIND));               \
    rows_seen++;
static void test_rows(void) {
    rows_seen = 0;
    SG_DTYPES(ROW_CHECK)
    CHECK(rows_seen == SG_DTYPE__COUNT);
}

/* A subset holds every dtype of its kinds and no other: marks what it expands, then compares
 * with the runtime's predicates. */
static bool marked[SG_DTYPE__END];
static void clear_marks(void) { memset(marked, 0, sizeof marked); }
#define MARK(NAME, ...) marked[SG_##NAME] = true;
#define MARK_PAIR(E, T) marked[E] = sizeof(T) == sg_dtype_size(E);

static void test_subsets(void) {
    clear_marks();
    SG_DTYPES_INTEGRAL(MARK)
    for (int d = 0; d < SG_DTYPE__END; d++)
        CHECK(marked[d] == (sg_dtype_valid(d) && sg_dtype_is_integral((sg_dtype)d, false)));

    clear_marks();
    SG_DTYPES_FLOATING(MARK)
    for (int d = 0; d < SG_DTYPE__END; d++)
        CHECK(marked[d] == (sg_dtype_valid(d) && sg_dtype_is_floating((sg_dtype)d)));

    clear_marks();
    SG_DTYPES_WHERE(MARK, 0, 0, 0, 0, 0, 1)
    for (int d = 0; d < SG_DTYPE__END; d++)
        CHECK(marked[d] == (sg_dtype_valid(d) && sg_dtype_is_complex((sg_dtype)d)));

    clear_marks();
    SG_DTYPES_WHERE(MARK, 1, 0, 0, 0, 0, 0)
    for (int d = 0; d < SG_DTYPE__END; d++) CHECK(marked[d] == (d == SG_BOOL));

    /* the 16-bit floats are the reduced kind; float32 and float64 the float kind */
    clear_marks();
    SG_DTYPES_WHERE(MARK, 0, 0, 0, 0, 1, 0)
    for (int d = 0; d < SG_DTYPE__END; d++)
        CHECK(marked[d] == (d == SG_FLOAT16 || d == SG_BFLOAT16));
    clear_marks();
    SG_DTYPES_WHERE(MARK, 0, 0, 0, 1, 0, 0)
    for (int d = 0; d < SG_DTYPE__END; d++)
        CHECK(marked[d] == (d == SG_FLOAT32 || d == SG_FLOAT64));
    /* unsigned and signed integers */
    clear_marks();
    SG_DTYPES_WHERE(MARK, 0, 1, 0, 0, 0, 0)
    for (int d = 0; d < SG_DTYPE__END; d++) CHECK(marked[d] == (d == SG_UINT8));

    /* every dtype, as (enum, C type) pairs whose C type has the dtype's size */
    clear_marks();
    SG_DTYPES_CTYPES_WHERE(MARK_PAIR, 1, 1, 1, 1, 1, 1)
    for (int d = 0; d < SG_DTYPE__END; d++) CHECK(marked[d] == sg_dtype_valid(d));
}

int main(void) {
    test_abi_numbers();
    test_facts_per_number();
    test_rows();
    test_subsets();
    return check_result("test_rt_dtypes");
}
