/* cast.cu: elementwise copies with conversion on CUDA: the CUDA backend's sg_cast_copy_ (set
 * by sg_aten_cuda_init), through which copy_, to, clone, contiguous and the iterator's casts
 * and staging run on the GPU. */
#include "loops.cuh"

namespace {

template <class To, class From> struct convert_fn {
    __device__ To operator()(From v) const { return sg_cu_convert<To>(v); }
};

sg_status cuda_cast_copy(sg_tensor *dst, const sg_tensor *src) {
    sg_iter      it;
    sg_tensor   *res;
    sg_iter_spec spec = {};
    spec.op = "copy_";
    spec.out = dst;
    spec.in[0] = src;
    spec.nin = 1;
    spec.compute = dtype_of(src);
    spec.result = spec.out_dtype = dtype_of(dst);
    spec.to_out = true;
    sg_status st = sg_iter_build(&it, &spec, &res);
    if (st) return st;
    st = sg_cu_visit(dtype_of(dst), SG_CU_ALL, "copy_", [&](auto to) {
        using To = typename decltype(to)::type;
        return sg_cu_visit(dtype_of(src), SG_CU_ALL, "copy_", [&](auto from) {
            using From = typename decltype(from)::type;
            return sg_cu_pointwise<To, From>(&it, convert_fn<To, From>{}, "copy_");
        });
    });
    if (st) {
        sg_iter_free(&it);
        sg_tensor_release(res);
        return st;
    }
    st = sg_iter_finish(&it, &res);
    sg_tensor_release(res);
    return st;
}

} // namespace

extern "C" sg_status sg_cu_register_cast(void) {
    sg_set_cast_copy(SG_DEV_CUDA, cuda_cast_copy);
    return SG_OK;
}
