/* my_ops.c: kernels of the custom namespace my_ops, written on the aten API:
 *   my_ops::short_kernel(x)        x * 1.23            (CPU)
 *   my_ops::scale(x, factor)       x * factor          (every backend: CompositeExplicitAutograd)
 *   my_ops::scale.out(x, f, out)   writes x * f into out, returns it (CPU)
 * Each is the C function schemas/my_ops.yaml names under `dispatch:`: the generated my_ops.h
 * declares it with its op's kernel type (my_ops_kernels.h), so a definition of another type
 * does not compile, and my_ops_init() registers it. */
#include "sg_my_ops.h"
#include "sg_aten_cpu.h"
#include "aten.h"

sg_status my_ops_short_kernel_cpu(sg_keyset ks, sg_tensor *x, sg_tensor **ret) {
    (void)ks;
    return aten_mul_Scalar(x, sg_scalar_float(1.23), ret);
}

sg_status my_ops_scale_generic(sg_keyset ks, sg_tensor *x, double factor, sg_tensor **ret) {
    (void)ks;
    return aten_mul_Scalar(x, sg_scalar_float(factor), ret);
}

sg_status my_ops_scale_out_cpu(sg_keyset ks, sg_tensor *x, double factor, sg_tensor *out,
                               sg_tensor **ret) {
    (void)ks;
    sg_tensor *f = NULL;
    int64_t    one[1] = {1};
    sg_status  st = sg_tensor_empty(one, 0, SG_FLOAT64, SG_CPU, &f);
    if (st) return st;
    *(double *)sg_tensor_data(f) = factor;
    f->flags |= SG_TENSOR_WRAPPED_NUMBER; /* a scalar, as aten passes Python numbers */
    st = aten_mul_out(x, f, out, ret);
    sg_tensor_release(f);
    return st;
}

sg_status sg_my_ops_init(void) {
    sg_status st = sg_aten_cpu_init();
    return st ? st : my_ops_init();
}
