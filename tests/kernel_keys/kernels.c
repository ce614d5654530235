/* kernels.c: the kernels tests/kernel_keys/kk.yaml names, defined as a user of the generated
 * library kk defines them, and a program that calls the ops (tests/kernel_keys.sh):
 *   -DWRONG_TYPE    kk_offset_any takes an int64_t where the schema says float: with the
 *                   header that declares it, this must not compile, even at plain -Wall;
 *   -DLEAVE_OUT     kk_offset_any is not defined: the link must fail, naming it. */
#include "check.h"
#include "kk.h"

static int twice_calls, offset_calls;

/* a new float tensor like x, each element f(x's) */
static sg_status map(sg_tensor *x, double mul, double add, sg_tensor **ret) {
    sg_status st = sg_tensor_empty(x->sizes, x->ndim, SG_FLOAT32, x->device, ret);
    if (st || x->device.type == SG_DEV_META) return st;
    const float *in = sg_tensor_data(x);
    float       *out = sg_tensor_data(*ret);
    for (int64_t i = 0; i < sg_tensor_numel(x); i++) out[i] = (float)(in[i] * mul + add);
    return SG_OK;
}

sg_status kk_twice_cpu(sg_keyset ks, sg_tensor *x, sg_tensor **ret) {
    (void)ks;
    twice_calls++;
    return map(x, 2, 0, ret);
}

#ifndef LEAVE_OUT
#ifdef WRONG_TYPE
sg_status kk_offset_any(sg_keyset ks, sg_tensor *x, int64_t by, sg_tensor **ret) {
#else
sg_status kk_offset_any(sg_keyset ks, sg_tensor *x, double by, sg_tensor **ret) {
#endif
    (void)ks;
    offset_calls++;
    return map(x, 1, (double)by, ret);
}
#endif

int main(void) {
    CHECK(kk_init() == SG_OK);
    CHECK(kk_init() == SG_OK); /* once per runtime epoch: no second registration */
    int64_t    n[1] = {3};
    float      v[3] = {1, -2, 10};
    sg_tensor *x = NULL, *r = NULL, *m = NULL;
    CHECK(sg_tensor_from_blob(v, n, NULL, 1, SG_FLOAT32, SG_CPU, 0, NULL, NULL, &x) == SG_OK);

    /* typed calls reach the kernels at the keys the schema names them for */
    CHECK(kk_twice(x, &r) == SG_OK && twice_calls == 1);
    CHECK(r && ((float *)sg_tensor_data(r))[2] == 20.0f);
    sg_tensor_release(r);
    CHECK(kk_twice_again(x, &r) == SG_OK && twice_calls == 2);
    sg_tensor_release(r);
    CHECK(kk_offset(x, 0.5, &r) == SG_OK && offset_calls == 1);
    CHECK(r && ((float *)sg_tensor_data(r))[1] == -1.5f);
    sg_tensor_release(r);
    CHECK(sg_tensor_empty(n, 1, SG_FLOAT32, SG_META, &m) == SG_OK);
    CHECK(kk_twice(m, &r) == SG_OK && twice_calls == 3 && r && r->device.type == SG_DEV_META);
    sg_tensor_release(r);

    /* the generated out variant runs the functional op's kernel */
    sg_tensor *o = NULL;
    CHECK(sg_tensor_empty(n, 1, SG_FLOAT32, SG_CPU, &o) == SG_OK);
    CHECK(kk_offset_out(x, 2.0, o, &r) == SG_OK && r == o && offset_calls == 2);
    CHECK(((float *)sg_tensor_data(o))[2] == 12.0f);
    sg_tensor_release(r);
    sg_tensor_release(o);

    /* boxed, by name: through the boxing adapter the registration chose */
    sg_any args[2] = {sg_any_tensor(x), sg_any_float(1.0)}, ret;
    CHECK(sg_call_by_name("kk::offset", "", args, 2, &ret, 1) == SG_OK && offset_calls == 3);
    CHECK(ret.tag == SG_ANY_TENSOR && ((float *)sg_tensor_data(ret.u.t))[0] == 2.0f);
    sg_any_release(&ret);

    /* a key the selection leaves out registers nothing */
    CHECK(kk_gpu(x, &r) == SG_ENOKERNEL);

    /* a new runtime epoch: init registers again */
    sg_tensor_release(m);
    sg_tensor_release(x);
    sg_runtime_shutdown();
    CHECK(kk_init() == SG_OK);
    CHECK(sg_tensor_from_blob(v, n, NULL, 1, SG_FLOAT32, SG_CPU, 0, NULL, NULL, &x) == SG_OK);
    CHECK(kk_twice(x, &r) == SG_OK && twice_calls == 4);
    sg_tensor_release(r);
    sg_tensor_release(x);
    sg_runtime_shutdown();
    return check_result("kernel_keys");
}
