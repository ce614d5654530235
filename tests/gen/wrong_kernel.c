/* wrong_kernel.c: registers a kernel for aten::abs. Built with -DRIGHT it has the op's kernel
 * type and compiles; without, it takes an int64_t where the schema says Tensor, and the
 * generated registration function must refuse it at compile time. */
#include "shipped.h"

#ifdef RIGHT
static sg_status k(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
#else
static sg_status k(sg_keyset ks, int64_t self, sg_tensor **ret) {
#endif
    (void)ks, (void)self, (void)ret;
    return SG_OK;
}

sg_status register_it(sg_handle **h);
sg_status register_it(sg_handle **h) { return aten_abs_register(SG_KEY_CPU, k, h); }
