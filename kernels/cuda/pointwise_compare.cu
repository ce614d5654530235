/* pointwise_compare.cu: comparisons (eq, ne, lt, le, gt, ge; Tensor and Scalar overloads) and
 * logical ops (and, or, xor, not) on CUDA: computed in the promoted dtype, written as bool (an
 * out= of another dtype gets 0/1 through the iterator's staging). As kernels/cpu/pointwise.c. */
#include "pointwise.cuh"

namespace {

enum cmp_op { EQ, NE, LT, LE, GT, GE };
enum logic_op { AND, OR, XOR };

/* One kernel per dtype for all six comparisons: the op is uniform across the launch, so the
 * switch costs no divergence, and it keeps six times fewer kernels to compile. */
template <class T> struct cmp_fn {
    int op;
    __device__ bool operator()(T a, T b) const {
        sg_acc_t<T> x = sg_pw_ld(a), y = sg_pw_ld(b);
        switch (op) {
        case EQ: return x == y;
        case NE: return x != y;
        case LT: return x < y;
        case LE: return x <= y;
        case GT: return x > y;
        default: return x >= y;
        }
    }
};

template <class T> struct logic_fn {
    int op;
    __device__ bool operator()(T a, T b) const {
        bool x = sg_cu_convert<bool>(a), y = sg_cu_convert<bool>(b);
        return op == AND ? (x && y) : op == OR ? (x || y) : (x != y);
    }
};

template <class T> struct not_fn {
    __device__ bool operator()(T a) const { return !sg_cu_convert<bool>(a); }
};

sg_status cmp_run(const char *op, int code, sg_tensor *self, sg_tensor *other, sg_tensor *out,
                  sg_tensor **ret) {
    *ret = NULL;
    sg_dtype     k = sg_pointwise_result(self, other, NULL);
    sg_iter_spec spec = sg_pw_spec(op, out, self, other, SG_BOOL, k, SG_BOOL);
    return sg_pw_visit<SG_CU_ALL>(k, op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        return sg_pw_run<bool, T, T>(spec, cmp_fn<T>{code}, ret);
    });
}

/* the Scalar overloads: the scalar as a wrapped number (a host scalar to the kernel) */
sg_status cmp_scalar_run(const char *op, int code, sg_tensor *self, sg_scalar other,
                         sg_tensor *out, sg_tensor **ret) {
    sg_tensor *o;
    *ret = NULL;
    sg_status st = sg_scalar_tensor(other, &o);
    if (st) return st;
    st = cmp_run(op, code, self, o, out, ret);
    sg_tensor_release(o);
    return st;
}

#define CMP(NAME, CODE)                                                                       \
    sg_status NAME##_out(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor *out,     \
                         sg_tensor **ret) {                                                    \
        (void)ks;                                                                              \
        return cmp_run(#NAME, CODE, self, other, out, ret);                                    \
    }                                                                                          \
    sg_status NAME##_scalar_out(sg_keyset ks, sg_tensor *self, sg_scalar other,               \
                                sg_tensor *out, sg_tensor **ret) {                             \
        (void)ks;                                                                              \
        return cmp_scalar_run(#NAME, CODE, self, other, out, ret);                             \
    }
CMP(eq, EQ)
CMP(ne, NE)
CMP(lt, LT)
CMP(le, LE)
CMP(gt, GT)
CMP(ge, GE)
#undef CMP

sg_status logic_run(const char *op, int code, sg_tensor *self, sg_tensor *other, sg_tensor *out,
                    sg_tensor **ret) {
    *ret = NULL;
    sg_dtype     k = sg_pointwise_result(self, other, NULL);
    sg_iter_spec spec = sg_pw_spec(op, out, self, other, SG_BOOL, k, SG_BOOL);
    return sg_pw_visit<SG_CU_ALL>(k, op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        return sg_pw_run<bool, T, T>(spec, logic_fn<T>{code}, ret);
    });
}

#define LOGICAL(NAME, CODE)                                                                   \
    sg_status NAME##_out(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor *out,     \
                         sg_tensor **ret) {                                                    \
        (void)ks;                                                                              \
        return logic_run(#NAME, CODE, self, other, out, ret);                                  \
    }                                                                                          \
    sg_status NAME##_fn(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor **ret) {   \
        return NAME##_out(ks, self, other, NULL, ret);                                         \
    }                                                                                          \
    sg_status NAME##_inplace(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor **ret) { \
        sg_status st = sg_pointwise_inplace_shape(#NAME "_", self, other);                     \
        *ret = NULL;                                                                           \
        return st ? st : NAME##_out(ks, self, other, self, ret);                               \
    }
LOGICAL(logical_and, AND)
LOGICAL(logical_or, OR)
LOGICAL(logical_xor, XOR)
#undef LOGICAL

sg_status logical_not_out(sg_keyset ks, sg_tensor *self, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    *ret = NULL;
    sg_dtype     k = dtype_of(self);
    sg_iter_spec spec = sg_pw_spec("logical_not", out, self, NULL, SG_BOOL, k, SG_BOOL);
    return sg_pw_visit<SG_CU_ALL>(k, "logical_not", [&](auto tag) {
        using T = typename decltype(tag)::type;
        return sg_pw_run<bool, T>(spec, not_fn<T>{}, ret);
    });
}
sg_status logical_not_fn(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    return logical_not_out(ks, self, NULL, ret);
}
sg_status logical_not_inplace(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    return logical_not_out(ks, self, self, ret);
}

} // namespace

sg_status sg_pw_register_compare(void) {
    SG_CU_REG(aten_eq_Tensor_out, eq_out);
    SG_CU_REG(aten_ne_Tensor_out, ne_out);
    SG_CU_REG(aten_lt_Tensor_out, lt_out);
    SG_CU_REG(aten_le_Tensor_out, le_out);
    SG_CU_REG(aten_gt_Tensor_out, gt_out);
    SG_CU_REG(aten_ge_Tensor_out, ge_out);
    SG_CU_REG(aten_eq_Scalar_out, eq_scalar_out);
    SG_CU_REG(aten_ne_Scalar_out, ne_scalar_out);
    SG_CU_REG(aten_lt_Scalar_out, lt_scalar_out);
    SG_CU_REG(aten_le_Scalar_out, le_scalar_out);
    SG_CU_REG(aten_gt_Scalar_out, gt_scalar_out);
    SG_CU_REG(aten_ge_Scalar_out, ge_scalar_out);
    SG_CU_REG(aten_logical_and, logical_and_fn);
    SG_CU_REG(aten_logical_and_, logical_and_inplace);
    SG_CU_REG(aten_logical_and_out, logical_and_out);
    SG_CU_REG(aten_logical_or, logical_or_fn);
    SG_CU_REG(aten_logical_or_, logical_or_inplace);
    SG_CU_REG(aten_logical_or_out, logical_or_out);
    SG_CU_REG(aten_logical_xor, logical_xor_fn);
    SG_CU_REG(aten_logical_xor_, logical_xor_inplace);
    SG_CU_REG(aten_logical_xor_out, logical_xor_out);
    SG_CU_REG(aten_logical_not, logical_not_fn);
    SG_CU_REG(aten_logical_not_, logical_not_inplace);
    SG_CU_REG(aten_logical_not_out, logical_not_out);
    return SG_OK;
}
