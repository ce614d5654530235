/* test_rt_types.c: the runtime's side of the type-family table (sg_type_table.h): the tags a
 * boxed call takes for each argument (sg_op_call_boxed), and the signature letters a typed
 * call that lands on a boxed kernel boxes by (sg_call_boxed_sig). */
#include "check.h"
#include "sg_runtime.h"

#include <string.h>

static float buf[4];

static sg_tensor *cpu_tensor(void) {
    int64_t    sizes[1] = {4};
    sg_tensor *t = NULL;
    CHECK(sg_tensor_from_blob(buf, sizes, NULL, 1, SG_FLOAT32, (sg_device){SG_DEV_CPU, 0}, 0,
                              NULL, NULL, &t) == SG_OK);
    return t;
}

/* A boxed kernel: records its arguments' tags; returns argument 0 and the number of
 * arguments. */
static int32_t seen_tags[8];
static sg_status record(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                        int32_t nrets, void *ctx) {
    int32_t nargs = sg_op_nargs(op);
    (void)ctx, (void)op, (void)ks;
    for (int32_t i = 0; i < nargs && i < 8; i++) seen_tags[i] = args[i].tag;
    if (nrets > 0) rets[0] = sg_any_tensor(sg_tensor_retain(args[0].u.t));
    if (nrets > 1) rets[1] = sg_any_int(nargs);
    return SG_OK;
}

static sg_op *define(const char *schema) {
    sg_op    *op = NULL;
    sg_handle *h = NULL;
    CHECK(sg_op_define(schema, &op) == SG_OK && op);
    if (op) CHECK(sg_op_impl(op, SG_KEY_CPU, (sg_kernel){NULL, record, NULL}, &h) == SG_OK);
    return op;
}

/* Calls op(t, v) boxed; SG_OK or the error. */
static sg_status call2(const sg_op *op, sg_tensor *t, sg_any v) {
    sg_any args[2] = {sg_any_tensor(t), v}, ret = sg_any_none();
    sg_status st = sg_op_call_boxed(op, args, 2, &ret, 1);
    sg_any_release(&ret);
    return st;
}

static void test_accepts(void) {
    sg_tensor *t = cpu_tensor();
    sg_any     s = sg_any_str("x", 1), n = sg_any_none();

    /* QScheme is of family int: an int, nothing else */
    sg_op *q = define("t2::q(Tensor x, QScheme s) -> Tensor");
    CHECK(call2(q, t, sg_any_int(1)) == SG_OK);
    CHECK(call2(q, t, s) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "t2::q: argument 1 's' expects QScheme, got str");

    /* Storage and Stream are opaque handles; optional ones take None too */
    sg_op *st = define("t2::st(Tensor x, Storage s) -> Tensor");
    sg_any opaque = {SG_ANY_OPAQUE, 0, {0}};
    CHECK(call2(st, t, opaque) == SG_OK);
    CHECK(call2(st, t, sg_any_int(1)) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "t2::st: argument 1 's' expects Storage, got int");
    CHECK(call2(st, t, n) == SG_EINVAL);
    sg_op *so = define("t2::so(Tensor x, Stream? s) -> Tensor");
    CHECK(call2(so, t, opaque) == SG_OK);
    CHECK(call2(so, t, n) == SG_OK);

    /* Generator takes None only where optional */
    sg_op *g = define("t2::g(Tensor x, Generator g) -> Tensor");
    sg_op *go = define("t2::go(Tensor x, Generator? g) -> Tensor");
    sg_any gen = {SG_ANY_GENERATOR, 0, {0}};
    CHECK(call2(g, t, gen) == SG_OK);
    CHECK(call2(g, t, n) == SG_EINVAL);
    CHECK(call2(go, t, n) == SG_OK);

    /* int[2]? takes an int list, one int and None */
    sg_op  *k = define("t2::k(Tensor x, int[2]? k) -> Tensor");
    int64_t two[2] = {1, 2};
    CHECK(call2(k, t, sg_any_int_list(two, 2)) == SG_OK);
    CHECK(call2(k, t, sg_any_int(3)) == SG_OK);
    CHECK(call2(k, t, n) == SG_OK);
    CHECK(call2(k, t, sg_any_float(1)) == SG_EINVAL);
    sg_op *ku = define("t2::ku(Tensor x, int[] k) -> Tensor");
    CHECK(call2(ku, t, sg_any_int(3)) == SG_EINVAL);

    /* Tensor?[] takes both tensor lists; Tensor[] only its own */
    sg_op     *l = define("t2::l(Tensor x, Tensor?[] l) -> Tensor");
    sg_op     *lp = define("t2::lp(Tensor x, Tensor[] l) -> Tensor");
    sg_tensor *items[1] = {t};
    sg_any     tl = sg_any_tensor_list(items, 1), otl = tl;
    otl.tag = SG_ANY_OPT_TENSOR_LIST;
    CHECK(call2(l, t, tl) == SG_OK);
    CHECK(call2(l, t, otl) == SG_OK);
    CHECK(call2(lp, t, tl) == SG_OK);
    CHECK(call2(lp, t, otl) == SG_EINVAL);

    /* str[] travels as a list; Any as anything */
    sg_op *w = define("t2::w(Tensor x, str[] w) -> Tensor");
    sg_any list = {SG_ANY_LIST, 0, {0}};
    CHECK(call2(w, t, list) == SG_OK);
    CHECK(call2(w, t, s) == SG_EINVAL);
    sg_op *a = define("t2::a(Tensor x, Any a) -> Tensor");
    CHECK(call2(a, t, s) == SG_OK);
    CHECK(call2(a, t, opaque) == SG_OK);
    sg_tensor_release(t);
}

static void test_signature_letters(void) {
    sg_tensor *t = cpu_tensor();
    sg_op     *op = define("t2::mix(Tensor x, int? i, int[]? n, str s, Scalar y, float[] f) -> "
                           "(Tensor, int)");
    sg_keyset       ks = t->keys;
    const sg_entry *e = sg_dispatch_entry(op, ks);
    int64_t         i = 7;
    sg_scalar       y = sg_scalar_int(2);
    double          fl[2] = {1, 2};
    sg_float_list   f = {fl, 2};
    sg_tensor      *rt = NULL;
    int64_t         ri = 0;
    memset(seen_tags, -1, sizeof seen_tags);
    CHECK(sg_call_boxed_sig(e, op, ks, "tINsSr>ti", t, &i, (const sg_int_list *)NULL, "str", y,
                            f, &rt, &ri) == SG_OK);
    CHECK(seen_tags[0] == SG_ANY_TENSOR && seen_tags[1] == SG_ANY_INT);
    CHECK(seen_tags[2] == SG_ANY_NONE && seen_tags[3] == SG_ANY_STR);
    CHECK(seen_tags[4] == SG_ANY_INT && seen_tags[5] == SG_ANY_FLOAT_LIST);
    CHECK(rt == t && ri == 6);
    sg_tensor_release(rt);

    /* a letter no family has is an error, not a crash */
    CHECK(sg_call_boxed_sig(e, op, ks, "t?>ti", t, 0, &rt, &ri) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "a generated call used the unknown signature letter '?'");
    sg_tensor_release(t);
}

int main(void) {
    test_accepts();
    test_signature_letters();
    sg_runtime_shutdown();
    return check_result("test_rt_types");
}
