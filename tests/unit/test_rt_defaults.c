/* test_rt_defaults.c: boxed calls that leave trailing arguments out get the schema's defaults
 * filled in (sg_op_call_boxed, sg_call_by_name), the kernel sees them; calls that leave out an
 * argument without a usable default, or pass too many, fail with a message; sg_op_arg_default. */
#include "rt_check.h"
#include "sg_runtime.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static float buf[4];

static sg_tensor *cpu_tensor(void) {
    int64_t    sizes[1] = {4};
    sg_tensor *t = NULL;
    CHECK(sg_tensor_from_blob(buf, sizes, NULL, 1, SG_FLOAT32, SG_CPU, 0, NULL, NULL, &t) ==
          SG_OK);
    return t;
}

/* A call that must fail with status want and exactly the message msg. */
#define FAILS(want, msg, call)                     \
    do {                                           \
        sg_error_clear();                          \
        CHECK((call) == (want));                   \
        CHECK_STR(sg_last_error(), (msg));         \
    } while (0)

/* ---- an op with defaults of many kinds --------------------------------------------------- */

static const char *const many_schema =
    "td::many(Tensor x, int i=3, float f=1, bool b=True, Scalar s=2.5, Scalar si=-1, "
    "int? o=None, int[2] k=1, SymInt[] l=[0,1], int[1] e=[], ScalarType? d=long, str m='mean', "
    "*, MemoryFormat mf=contiguous_format, int r=Mean, float[]? fl=None, Tensor? y=None, "
    "Scalar z=2j, bool[] bl=[True,False], str[] names=['a', 'bc'], Layout? lay=strided, "
    "QScheme q=per_channel_affine, float g=1e-05) -> Tensor";
enum { MANY_NARGS = 22 };

/* What the kernel saw: the arguments it found at their defaults, and i (which callers pass). */
static int     many_ran, many_at_default;
static int64_t many_i;
static bool    many_b;

/* Counts the arguments from 2 on that hold their schema defaults (the test's own expectations,
 * written from the schema above), so a call that passes them shows fewer. */
static sg_status many_kernel(const sg_op *op, sg_keyset ks, const sg_any *a, sg_any *rets,
                             int32_t nrets, void *ctx) {
    (void)ks, (void)ctx;
    many_ran++;
    CHECK(sg_op_nargs(op) == MANY_NARGS);
    CHECK(a[0].tag == SG_ANY_TENSOR && a[0].u.t);
    CHECK(a[1].tag == SG_ANY_INT);
    many_i = a[1].u.i;
    many_b = a[3].tag == SG_ANY_BOOL && a[3].u.b;
    int n = 0;
    n += a[2].tag == SG_ANY_FLOAT && a[2].u.f == 1.0;
    n += a[3].tag == SG_ANY_BOOL && a[3].u.b == true;
    n += a[4].tag == SG_ANY_FLOAT && a[4].u.f == 2.5;
    n += a[5].tag == SG_ANY_INT && a[5].u.i == -1;
    n += a[6].tag == SG_ANY_NONE;
    n += a[7].tag == SG_ANY_INT_LIST && a[7].len == 2 && a[7].u.ints[0] == 1 &&
         a[7].u.ints[1] == 1; /* int[2] k=1 is [1, 1], as c10 reads it */
    n += a[8].tag == SG_ANY_INT_LIST && a[8].len == 2 && a[8].u.ints[0] == 0 &&
         a[8].u.ints[1] == 1;
    n += a[9].tag == SG_ANY_INT_LIST && a[9].len == 0;
    n += a[10].tag == SG_ANY_DTYPE && a[10].u.i == SG_INT64;
    n += a[11].tag == SG_ANY_STR && a[11].len == 4 && !strcmp(a[11].u.s, "mean");
    n += a[12].tag == SG_ANY_MEMORY_FORMAT && a[12].u.i == SG_CONTIGUOUS_FORMAT;
    n += a[13].tag == SG_ANY_INT && a[13].u.i == 1; /* Mean: c10's Reduction::Mean */
    n += a[14].tag == SG_ANY_NONE;
    n += a[15].tag == SG_ANY_NONE;
    n += a[16].tag == SG_ANY_COMPLEX && a[16].u.c && a[16].u.c->re == 0 && a[16].u.c->im == 2;
    n += a[17].tag == SG_ANY_BOOL_LIST && a[17].len == 2 && a[17].u.bools[0] &&
         !a[17].u.bools[1];
    n += a[18].tag == SG_ANY_LIST && a[18].len == 2 && a[18].u.items[0].tag == SG_ANY_STR &&
         !strcmp(a[18].u.items[0].u.s, "a") && a[18].u.items[1].len == 2 &&
         !strcmp(a[18].u.items[1].u.s, "bc");
    n += a[19].tag == SG_ANY_LAYOUT && a[19].u.i == SG_STRIDED;
    n += a[20].tag == SG_ANY_INT && a[20].u.i == 1; /* per_channel_affine */
    n += a[21].tag == SG_ANY_FLOAT && a[21].u.f == 1e-05;
    many_at_default = n;
    if (nrets > 0) rets[0] = sg_any_tensor(sg_tensor_retain(a[0].u.t));
    return SG_OK;
}

/* Calls many with args[0..nargs) and returns how many arguments from 2 on the kernel saw at
 * their defaults, or -1 where the call failed. */
static int call_many(const sg_op *op, const sg_any *args, int32_t nargs, bool by_name) {
    sg_any ret;
    many_ran = 0;
    many_at_default = -1;
    sg_status st = by_name ? sg_call_by_name("td::many", "", args, nargs, &ret, 1)
                           : sg_op_call_boxed(op, args, nargs, &ret, 1);
    if (st) {
        fprintf(stderr, "call_many(%d): %s\n", (int)nargs, sg_last_error());
        return -1;
    }
    CHECK(many_ran == 1);
    CHECK(ret.tag == SG_ANY_TENSOR && ret.u.t == args[0].u.t);
    sg_any_release(&ret);
    return many_at_default;
}

static void test_fill(void) {
    sg_op     *op = define(many_schema);
    sg_handle *h;
    CHECK(sg_op_nargs(op) == MANY_NARGS);
    CHECK(sg_op_impl(op, SG_KEY_CPU, (sg_kernel){NULL, many_kernel, NULL}, &h) == SG_OK);
    sg_tensor *x = cpu_tensor();
    sg_any     args[MANY_NARGS];
    args[0] = sg_any_tensor(x);

    /* only x: i and every other argument come from the schema */
    CHECK(call_many(op, args, 1, false) == MANY_NARGS - 2);
    CHECK(many_i == 3);
    /* x and i: i as passed, the rest defaults */
    args[1] = sg_any_int(7);
    CHECK(call_many(op, args, 2, false) == MANY_NARGS - 2);
    CHECK(many_i == 7);
    /* through the name, the same */
    CHECK(call_many(op, args, 2, true) == MANY_NARGS - 2);
    CHECK(many_i == 7);
    CHECK(call_many(op, args, 1, true) == MANY_NARGS - 2 && many_i == 3);

    /* every argument passed, none at its default: the kernel sees what was passed */
    sg_complex z = {1, 0};
    int64_t    two[2] = {5, 6}, one[1] = {9};
    bool       bl[1] = {false};
    sg_any     name = sg_any_str("q", 1);
    sg_any     full[MANY_NARGS] = {
        sg_any_tensor(x), sg_any_int(8), sg_any_float(2), sg_any_bool(false), sg_any_int(4),
        sg_any_float(0.5), sg_any_int(1), sg_any_int_list(two, 2), sg_any_int_list(one, 1),
        sg_any_int_list(one, 1), sg_any_dtype(SG_FLOAT32), sg_any_str("sum", 3),
        sg_box_tag_i(SG_ANY_MEMORY_FORMAT, SG_CHANNELS_LAST), sg_any_int(2), sg_any_none(),
        sg_any_tensor(x), {SG_ANY_COMPLEX, 0, {.c = &z}}, {SG_ANY_BOOL_LIST, 1, {.bools = bl}},
        {SG_ANY_LIST, 1, {.items = &name}}, sg_box_tag_i(SG_ANY_LAYOUT, SG_SPARSE_COO),
        sg_any_int(0), sg_any_float(0.25)};
    full[14] = (sg_any){SG_ANY_FLOAT_LIST, 0, {0}};
    CHECK(call_many(op, full, MANY_NARGS, false) == 0);
    CHECK(many_i == 8 && !many_b);
    CHECK(call_many(op, full, MANY_NARGS, true) == 0);
    /* all but the last two: those two at their defaults */
    CHECK(call_many(op, full, MANY_NARGS - 2, false) == 2);
    /* a passed argument is still checked */
    full[2] = sg_any_str("no", 2);
    sg_any ret;
    FAILS(SG_EINVAL, "td::many: argument 2 'f' expects float, got str",
          sg_op_call_boxed(op, full, 3, &ret, 1));

    /* the defaults, read back */
    sg_any v;
    CHECK(sg_op_arg_default(op, 10, &v) == SG_OK && v.tag == SG_ANY_DTYPE && v.u.i == SG_INT64);
    CHECK(sg_op_arg_default(op, 11, &v) == SG_OK && v.tag == SG_ANY_STR &&
          !strcmp(v.u.s, "mean"));
    FAILS(SG_ENOTFOUND, "sg_op_arg_default: td::many: argument 0 'x' has no default",
          sg_op_arg_default(op, 0, &v));
    CHECK(v.tag == SG_ANY_NONE);
    FAILS(SG_EINVAL, "sg_op_arg_default: td::many has 22 arguments; there is no argument 22",
          sg_op_arg_default(op, MANY_NARGS, &v));
    FAILS(SG_EINVAL, "sg_op_arg_default: op is NULL", sg_op_arg_default(NULL, 0, &v));
    sg_tensor_release(x);
}

/* ---- calls that cannot be filled ---------------------------------------------------------- */

static int plain_ran;
static int64_t plain_seen[40];

static sg_status plain_kernel(const sg_op *op, sg_keyset ks, const sg_any *a, sg_any *rets,
                              int32_t nrets, void *ctx) {
    (void)ks, (void)rets, (void)nrets, (void)ctx;
    plain_ran++;
    for (int32_t i = 1; i < sg_op_nargs(op) && i < 40; i++)
        plain_seen[i] = a[i].tag == SG_ANY_INT ? a[i].u.i
                        : a[i].tag == SG_ANY_LAYOUT ? 100 + a[i].u.i : -1000;
    return SG_OK;
}

static void test_errors(void) {
    sg_tensor *x = cpu_tensor();
    sg_handle *h;
    sg_any     args[41] = {sg_any_tensor(x), sg_any_int(5), sg_any_int(6), sg_any_int(7)};

    /* an argument left out without a default */
    sg_op *g = define("td::g(Tensor x, int n, int m=2) -> ()");
    CHECK(sg_op_impl(g, SG_KEY_CPU, (sg_kernel){NULL, plain_kernel, NULL}, &h) == SG_OK);
    plain_ran = 0;
    FAILS(SG_EINVAL, "td::g: expected 3 arguments, got 1; argument 1 'n' has no default to fill "
                     "in (schema: td::g(Tensor x, int n, int m=2) -> ())",
          sg_op_call_boxed(g, args, 1, NULL, 0));
    FAILS(SG_EINVAL, "td::g: expected 3 arguments, got 1; argument 1 'n' has no default to fill "
                     "in (schema: td::g(Tensor x, int n, int m=2) -> ())",
          sg_call_by_name("td::g", NULL, args, 1, NULL, 0));
    FAILS(SG_EINVAL, "td::g: expected 3 arguments, got 0; argument 0 'x' has no default to fill "
                     "in (schema: td::g(Tensor x, int n, int m=2) -> ())",
          sg_op_call_boxed(g, NULL, 0, NULL, 0));
    CHECK(plain_ran == 0);
    /* too many, and a negative count, as before */
    FAILS(SG_EINVAL, "td::g: expected 3 arguments, got 4 (schema: td::g(Tensor x, int n, int "
                     "m=2) -> ())",
          sg_op_call_boxed(g, args, 4, NULL, 0));
    FAILS(SG_EINVAL, "td::g: expected 3 arguments, got -1 (schema: td::g(Tensor x, int n, int "
                     "m=2) -> ())",
          sg_op_call_boxed(g, args, -1, NULL, 0));
    /* args NULL with a count, and result slots missing, as a full call reports them */
    FAILS(SG_EINVAL, "td::g: 2 arguments, but args is NULL", sg_op_call_boxed(g, NULL, 2, NULL, 0));
    sg_op *g1 = define("td::g1(Tensor x, int m=2) -> Tensor");
    FAILS(SG_EINVAL, "td::g1: 0 result slots given for 1 result",
          sg_op_call_boxed(g1, args, 1, NULL, 0));
    /* filled and passed */
    CHECK(sg_op_call_boxed(g, args, 2, NULL, 0) == SG_OK && plain_ran == 1);
    CHECK(plain_seen[1] == 5 && plain_seen[2] == 2);
    CHECK(sg_op_call_boxed(g, args, 3, NULL, 0) == SG_OK && plain_ran == 2);
    CHECK(plain_seen[1] == 5 && plain_seen[2] == 6);

    /* a default the runtime has no value for: the op defines and works when it is passed */
    sg_op *lay = define("td::lay(Tensor x, int n=4, ScalarType l=qint8) -> ()");
    CHECK(sg_op_impl(lay, SG_KEY_CPU, (sg_kernel){NULL, plain_kernel, NULL}, &h) == SG_OK);
    sg_any three[3] = {sg_any_tensor(x), sg_any_int(1), sg_box_tag_i(SG_ANY_DTYPE, SG_FLOAT32)};
    CHECK(sg_op_call_boxed(lay, three, 3, NULL, 0) == SG_OK);
    CHECK(plain_seen[2] == -1000); /* a dtype: neither int nor layout */
    FAILS(SG_EINVAL, "td::lay: expected 3 arguments, got 1; the default of argument 2 'l' "
                     "(qint8) has no boxed value to fill in, so a boxed call must pass it "
                     "(schema: td::lay(Tensor x, int n=4, ScalarType l=qint8) -> ())",
          sg_op_call_boxed(lay, three, 1, NULL, 0));
    sg_any v;
    FAILS(SG_EUNSUPPORTED, "sg_op_arg_default: td::lay: the default of argument 2 'l' "
                           "(qint8) has no boxed value",
          sg_op_arg_default(lay, 2, &v));
    CHECK(sg_op_arg_default(lay, 1, &v) == SG_OK && v.tag == SG_ANY_INT && v.u.i == 4);

    /* more arguments than fit the call's array on the stack: the rest comes from the heap */
    char schema[1024];
    int  k = snprintf(schema, sizeof schema, "td::wide(Tensor x");
    for (int i = 1; i <= 39; i++) k += snprintf(schema + k, sizeof schema - k, ", int a%d=%d", i, i * 10);
    snprintf(schema + k, sizeof schema - k, ") -> ()");
    sg_op *wide = define(schema);
    CHECK(sg_op_impl(wide, SG_KEY_CPU, (sg_kernel){NULL, plain_kernel, NULL}, &h) == SG_OK);
    memset(plain_seen, 0, sizeof plain_seen);
    CHECK(sg_op_call_boxed(wide, args, 3, NULL, 0) == SG_OK);
    CHECK(plain_seen[1] == 5 && plain_seen[2] == 6 && plain_seen[3] == 30);
    CHECK(plain_seen[39] == 390);
    sg_tensor_release(x);
}

/* ---- a factory op: no tensors, every argument defaulted ---------------------------------- */

static int64_t made_n;
static sg_status make_kernel(const sg_op *op, sg_keyset ks, const sg_any *a, sg_any *rets,
                             int32_t nrets, void *ctx) {
    (void)op, (void)ks, (void)rets, (void)nrets, (void)ctx;
    CHECK(a[0].tag == SG_ANY_NONE);
    made_n = a[1].tag == SG_ANY_INT ? a[1].u.i : -1;
    return SG_OK;
}

static void test_no_arguments_passed(void) {
    sg_op     *make = define("td::make(*, Device? device=None, int n=2) -> ()");
    sg_handle *h;
    CHECK(sg_op_impl(make, SG_KEY_CPU, (sg_kernel){NULL, make_kernel, NULL}, &h) == SG_OK);
    made_n = 0;
    /* args NULL with no argument passed: the device's None picks CPU */
    CHECK(sg_op_call_boxed(make, NULL, 0, NULL, 0) == SG_OK && made_n == 2);
    made_n = 0;
    CHECK(sg_call_by_name("td::make", NULL, NULL, 0, NULL, 0) == SG_OK && made_n == 2);
}

/* ---- named constants: the schema library's values against the runtime's enums ----------- */

static sg_any default_of(const char *schema) {
    sg_op *op = define(schema);
    sg_any v = sg_any_none();
    if (op && sg_op_arg_default(op, 0, &v) != SG_OK) v = (sg_any){-1, 0, {0}};
    return v;
}

static void test_constants(void) {
    /* every dtype by the name sg_dtype_name gives it: the numbers are c10's on both sides */
    int ndtypes = 0;
    for (int t = 0; t < SG_DTYPE__END; t++) {
        if (!sg_dtype_valid(t)) continue;
        char schema[128];
        snprintf(schema, sizeof schema, "td::dt_%d(ScalarType d=%s) -> ()", t,
                 sg_dtype_name((sg_dtype)t));
        sg_any v = default_of(schema);
        CHECK(v.tag == SG_ANY_DTYPE && v.u.i == t);
        ndtypes++;
    }
    CHECK(ndtypes == SG_DTYPE__COUNT);
    /* torch's other spellings */
    sg_any v = default_of("td::c1(ScalarType d=cfloat) -> ()");
    CHECK(v.tag == SG_ANY_DTYPE && v.u.i == SG_COMPLEX64);
    v = default_of("td::c2(ScalarType? d=half) -> ()");
    CHECK(v.tag == SG_ANY_DTYPE && v.u.i == SG_FLOAT16);
    v = default_of("td::c3(MemoryFormat m=channels_last_3d) -> ()");
    CHECK(v.tag == SG_ANY_MEMORY_FORMAT && v.u.i == SG_CHANNELS_LAST_3D);
    v = default_of("td::c4(MemoryFormat? m=preserve_format) -> ()");
    CHECK(v.tag == SG_ANY_MEMORY_FORMAT && v.u.i == SG_PRESERVE_FORMAT);
    v = default_of("td::c5(Layout l=_mkldnn) -> ()");
    CHECK(v.tag == SG_ANY_LAYOUT && v.u.i == SG_MKLDNN);
    v = default_of("td::c6(Layout l=sparse_coo) -> ()");
    CHECK(v.tag == SG_ANY_LAYOUT && v.u.i == SG_SPARSE_COO);
    v = default_of("td::c6b(Layout l=sparse_csr) -> ()"); /* c10's numbers, not a dense list */
    CHECK(v.tag == SG_ANY_LAYOUT && v.u.i == SG_SPARSE_CSR && SG_SPARSE_CSR == 2 && SG_MKLDNN == 3);
    v = default_of("td::c7(int r=Sum) -> ()");
    CHECK(v.tag == SG_ANY_INT && v.u.i == 2);
    /* a dtype c10 has and the runtime does not: no boxed value */
    v = default_of("td::c8(ScalarType d=qint8) -> ()");
    CHECK(v.tag == -1 && sg_last_status() == SG_EUNSUPPORTED);
    /* Device defaults are named at call time, not at definition */
    v = default_of("td::c9(Device d=\"cpu\") -> ()");
    CHECK(v.tag == -1 && sg_last_status() == SG_EUNSUPPORTED);
}

int main(void) {
    test_fill();
    test_errors();
    test_no_arguments_passed();
    test_constants();
    sg_runtime_shutdown();
    return check_result("test_rt_defaults");
}
