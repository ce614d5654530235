/* test_cpu_my_ops.c: the my_ops library, built from its own schema file and linked beside
 * aten: typed and boxed calls, the out variant writing its (a!) argument, and the
 * read-only refusal that annotation brings. */
#include "check.h"
#include "sg_my_ops.h"

#include <math.h>
#include <string.h>

int main(void) {
    CHECK(sg_my_ops_init() == SG_OK);
    int64_t    n[1] = {3};
    float      v[3] = {1, -2, 10};
    sg_tensor *x = NULL, *r = NULL, *out = NULL;
    CHECK(sg_tensor_from_blob(v, n, NULL, 1, SG_FLOAT32, SG_CPU, 0, NULL, NULL, &x) == SG_OK);

    CHECK(my_ops_short_kernel(x, &r) == SG_OK && r && r->dtype == SG_FLOAT32);
    CHECK(r && fabsf(((float *)sg_tensor_data(r))[2] - 12.3f) < 1e-5f);
    sg_tensor_release(r);

    CHECK(my_ops_scale(x, 0.5, &r) == SG_OK && ((float *)sg_tensor_data(r))[1] == -1.0f);
    sg_tensor_release(r);

    CHECK(sg_tensor_empty(n, 1, SG_FLOAT32, SG_CPU, &out) == SG_OK);
    CHECK(my_ops_scale_out(x, 3.0, out, &r) == SG_OK && r == out);
    CHECK(((float *)sg_tensor_data(out))[2] == 30.0f);
    sg_tensor_release(r);

    /* boxed, by name */
    sg_any args[2] = {sg_any_tensor(x), sg_any_float(2.0)}, ret;
    CHECK(sg_call_by_name("my_ops::scale", "", args, 2, &ret, 1) == SG_OK);
    CHECK(ret.tag == SG_ANY_TENSOR && ((float *)sg_tensor_data(ret.u.t))[0] == 2.0f);
    sg_any_release(&ret);

    /* Tensor(a!) out: a read-only tensor is refused before any kernel runs */
    sg_tensor *ro = NULL;
    CHECK(sg_tensor_from_blob(v, n, NULL, 1, SG_FLOAT32, SG_CPU, SG_STORAGE_READ_ONLY, NULL, NULL,
                              &ro) == SG_OK);
    CHECK(my_ops_scale_out(x, 3.0, ro, &r) == SG_EREADONLY);
    CHECK(strstr(sg_last_error(), "my_ops::scale: argument 2 'out' is written by the op") != NULL);

    /* no CUDA kernel: the runtime says which backends have one */
    sg_tensor *fake = NULL;
    CHECK(sg_tensor_from_blob(v, n, NULL, 1, SG_FLOAT32, SG_CUDA(0), 0, NULL, NULL, &fake) == SG_OK);
    CHECK(my_ops_short_kernel(fake, &r) == SG_ENOKERNEL);
    CHECK_STR(sg_last_error(), "could not run 'my_ops::short_kernel' with arguments from the "
                               "'CUDA' backend (tensors on cuda:0); kernels are registered "
                               "for: CPU");

    sg_tensor_release(fake);
    sg_tensor_release(ro);
    sg_tensor_release(out);
    sg_tensor_release(x);
    sg_runtime_shutdown();
    return check_result("test_cpu_my_ops");
}
