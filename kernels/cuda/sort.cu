/* sort.cu: sort (stable, ascending or descending, any dim) and topk on CUDA, with
 * kernels/cpu/index.c's semantics: NaN ranks above every number (last ascending, first
 * descending), equal values keep their order (-0.0 equals 0.0), indices are int64, topk gives
 * the first k of the stable sort (largest: descending).
 *
 * How: every slice along dim becomes one segment of a key array, each element's key an
 * unsigned integer whose order is the values' (floats: the sign bit flipped for positives, all
 * bits for negatives, every NaN the largest key, -0.0 made +0.0; signed integers: the sign bit
 * flipped), paired with its position in the slice; CUB's stable segmented sort orders them;
 * a last kernel writes the first k positions of each slice and the elements they name,
 * through the outputs' strides. */
#include "index.cuh"

#include <cub/device/device_segmented_sort.cuh>

namespace {

template <class T> struct key_of { using type = uint32_t; }; /* float, half, bfloat16, int32 */
template <> struct key_of<double> { using type = uint64_t; };
template <> struct key_of<int64_t> { using type = uint64_t; };
template <> struct key_of<int16_t> { using type = uint16_t; };
template <> struct key_of<int8_t> { using type = uint8_t; };
template <> struct key_of<uint8_t> { using type = uint8_t; };
template <> struct key_of<bool> { using type = uint8_t; };

template <class T> __device__ __forceinline__ typename key_of<T>::type to_key(T v) {
    using K = typename key_of<T>::type;
    if constexpr (std::is_same<T, double>::value) {
        if (isnan(v)) return ~(K)0;
        double   x = v == 0.0 ? 0.0 : v;
        uint64_t u = (uint64_t)__double_as_longlong(x);
        return (u >> 63) ? ~u : u ^ (UINT64_C(1) << 63);
    } else if constexpr (sg_cu_is_float<T>()) {
        float x = (float)v;
        if (isnan(x)) return ~(K)0;
        if (x == 0.0f) x = 0.0f;
        uint32_t u = __float_as_uint(x);
        return (u >> 31) ? ~u : u ^ 0x80000000u;
    } else if constexpr (std::is_same<T, bool>::value || std::is_unsigned<T>::value) {
        return (K)v;
    } else {
        return (K)((K)v ^ ((K)1 << (sizeof(K) * 8 - 1)));
    }
}

/* keys[i], pos[i] of element i of the slices laid end to end (g: self's sizes and strides with
 * dim moved last). */
template <class T>
__global__ void __launch_bounds__(SG_CU_BLOCK)
    keys_kernel(const sg_cu_nd<1> g, const T *self, typename key_of<T>::type *keys, int64_t *pos,
                int64_t n, int64_t len) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        int64_t off = 0;
        sg_cu_coords(g, i, [&](int d, int64_t c) { off += c * g.st[0][d]; });
        keys[i] = to_key(self[off]);
        pos[i] = i % len;
    }
}

__global__ void offsets_kernel(int64_t *off, int64_t nseg, int64_t len) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i <= nseg; i += step)
        off[i] = i * len;
}

/* The first k of each sorted slice: values[.., p] = self[.., pos], indices[.., p] = pos. g: the
 * batch dims (all but dim) with self's, values' and indices' strides; ss, vs, is: their strides
 * along dim. */
template <class E>
__global__ void __launch_bounds__(SG_CU_BLOCK)
    pick_kernel(const sg_cu_nd<3> g, const E *self, E *values, int64_t *indices,
                const int64_t *sorted, int64_t nout, int64_t k, int64_t len, int64_t ss,
                int64_t vs, int64_t is) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nout; i += step) {
        int64_t s = i / k, p = i - s * k, so = 0, vo = 0, io = 0;
        sg_cu_coords(g, s, [&](int d, int64_t c) {
            so += c * g.st[0][d];
            vo += c * g.st[1][d];
            io += c * g.st[2][d];
        });
        int64_t j = sorted[s * len + p];
        values[vo + p * vs] = self[so + j * ss];
        indices[io + p * is] = j;
    }
}

/* A device buffer of n bytes (from the stream-ordered pool, through a uint8 tensor). */
sg_status buffer(sg_device dev, size_t n, sg_tensor **t, void **p) {
    int64_t   len = (int64_t)(n ? n : 1);
    sg_status st = sg_tensor_empty(&len, 1, SG_UINT8, dev, t);
    *p = st ? nullptr : sg_tensor_data(*t);
    return st;
}

/* Sorts every slice of self along dim and writes the first k of each into values and indices
 * (shaped as self with dim of size k). */
sg_status sort_slices(const char *op, sg_tensor *self, int64_t dim, bool desc, int64_t k,
                      sg_tensor *values, sg_tensor *indices) {
    int32_t n = sg_cu_ne_dim(self);
    int64_t len = sg_cu_ne_size(self, (int32_t)dim), numel = sg_tensor_numel(self);
    if (numel == 0 || k == 0) return SG_OK;
    int64_t nseg = numel / len;

    sg_cu_nd<1> gk;  /* self, dim last */
    sg_cu_nd<3> gp;  /* the batch dims */
    gk.ndim = n;
    gp.ndim = n - 1;
    for (int32_t d = 0, j = 0; d < n; d++) {
        if (d == dim) continue;
        gk.size[j] = gp.size[j] = sg_cu_ne_size(self, d);
        gk.st[0][j] = gp.st[0][j] = sg_cu_ne_stride(self, d);
        gp.st[1][j] = sg_cu_ne_stride(values, d);
        gp.st[2][j] = sg_cu_ne_stride(indices, d);
        j++;
    }
    gk.size[n - 1] = len;
    gk.st[0][n - 1] = sg_cu_ne_stride(self, (int32_t)dim);

    sg_cu_guard  guard(self->device);
    cudaStream_t s = sg_cu_stream();
    return sg_cu_visit(dtype_of(self), SG_CU_ALL, op, [&](auto tag) -> sg_status {
        using T = typename decltype(tag)::type;
        using K = typename key_of<T>::type;
        sg_tensor *bufs[6] = {};
        void      *p[6] = {};
        size_t     temp = 0;
        sg_status  st = SG_OK;
        const size_t kb = (size_t)numel * sizeof(K), pb = (size_t)numel * sizeof(int64_t);
        const size_t sizes[5] = {kb, kb, pb, pb, (size_t)(nseg + 1) * sizeof(int64_t)};
        for (int b = 0; b < 5 && !st; b++) st = buffer(self->device, sizes[b], &bufs[b], &p[b]);
        K       *keys = (K *)p[0], *keys_out = (K *)p[1];
        int64_t *pos = (int64_t *)p[2], *pos_out = (int64_t *)p[3], *off = (int64_t *)p[4];
        if (!st) {
            keys_kernel<T><<<sg_cu_blocks(numel), SG_CU_BLOCK, 0, s>>>(
                gk, (const T *)sg_tensor_data(self), keys, pos, numel, len);
            offsets_kernel<<<sg_cu_blocks(nseg + 1), SG_CU_BLOCK, 0, s>>>(off, nseg, len);
            st = sg_cu_check(op);
        }
        auto run = [&](void *tmp, size_t &bytes) {
            return desc ? cub::DeviceSegmentedSort::StableSortPairsDescending(
                              tmp, bytes, keys, keys_out, pos, pos_out, numel, nseg, off, off + 1, s)
                        : cub::DeviceSegmentedSort::StableSortPairs(
                              tmp, bytes, keys, keys_out, pos, pos_out, numel, nseg, off, off + 1, s);
        };
        if (!st) st = sg_cu_status(run(nullptr, temp), op);
        if (!st) st = buffer(self->device, temp, &bufs[5], &p[5]);
        if (!st) st = sg_cu_status(run(p[5], temp), op);
        if (!st) {
            int64_t nout = nseg * k;
            int64_t ss = sg_cu_ne_stride(self, (int32_t)dim);
            int64_t vs = sg_cu_ne_stride(values, (int32_t)dim);
            int64_t is = sg_cu_ne_stride(indices, (int32_t)dim);
            pick_kernel<T><<<sg_cu_blocks(nout), SG_CU_BLOCK, 0, s>>>(
                gp, (const T *)sg_tensor_data(self), (T *)sg_tensor_data(values),
                (int64_t *)sg_tensor_data(indices), pos_out, nout, k, len, ss, vs, is);
            st = sg_cu_check(op);
        }
        for (int b = 0; b < 6; b++) sg_tensor_release(bufs[b]);
        return st;
    });
}

sg_status need_cuda(const char *op, const sg_tensor *t) {
    if (t->device.type == SG_DEV_CUDA) return SG_OK;
    return sg_error(SG_EINVAL, "%s: expected a tensor on cuda, got one on %s", op,
                    sg_device_type_name((sg_device_type)t->device.type));
}

sg_status sort_out_k(sg_keyset ks, sg_tensor *self, const bool *stable, int64_t dim,
                     bool descending, sg_tensor *values, sg_tensor *indices,
                     sg_tensor **ret_values, sg_tensor **ret_indices) {
    (void)ks;
    sg_meta   m[2];
    sg_status st;
    *ret_values = *ret_indices = NULL;
    if (!aten_sort_values_stable_meta)
        return sg_error(SG_EUNSUPPORTED, "sort: the meta function is not set (sg_aten_cpu_init)");
    if ((st = aten_sort_values_stable_meta(self, stable, dim, descending, m)) ||
        (st = sg_check_dim("sort", &dim, self->ndim)))
        return st;
    if (sg_dtype_is_complex(dtype_of(self))) return sg_not_implemented("sort", dtype_of(self));
    if ((st = need_cuda("sort", self)) || (st = sg_cu_prep_out("sort", values, &m[0], true)) ||
        (st = sg_cu_prep_out("sort", indices, &m[1], true)) ||
        (st = sg_index_no_overlap("sort", values, self)) ||
        (st = sg_index_no_overlap("sort", indices, self)) ||
        (st = sort_slices("sort", self, dim, descending, sg_cu_ne_size(self, (int32_t)dim), values,
                          indices)))
        return st;
    *ret_values = sg_tensor_retain(values);
    *ret_indices = sg_tensor_retain(indices);
    return SG_OK;
}

sg_status topk_out_k(sg_keyset ks, sg_tensor *self, int64_t k, int64_t dim, bool largest,
                     bool sorted, sg_tensor *values, sg_tensor *indices, sg_tensor **ret_values,
                     sg_tensor **ret_indices) {
    (void)ks;
    sg_meta   m[2];
    sg_status st;
    *ret_values = *ret_indices = NULL;
    if (!aten_topk_values_meta)
        return sg_error(SG_EUNSUPPORTED, "topk: the meta function is not set (sg_aten_cpu_init)");
    if ((st = aten_topk_values_meta(self, k, dim, largest, sorted, m)) ||
        (st = sg_check_dim("topk", &dim, self->ndim)))
        return st;
    if (sg_dtype_is_complex(dtype_of(self)) || dtype_of(self) == SG_BOOL)
        return sg_not_implemented("topk_cuda", dtype_of(self));
    if ((st = need_cuda("topk", self)) || (st = sg_cu_prep_out("topk", values, &m[0], true)) ||
        (st = sg_cu_prep_out("topk", indices, &m[1], true)) ||
        (st = sg_index_no_overlap("topk", values, self)) ||
        (st = sg_index_no_overlap("topk", indices, self)) ||
        /* largest: descending with NaN first, as aten ranks NaN above every number */
        (st = sort_slices("topk", self, dim, largest, k, values, indices)))
        return st;
    *ret_values = sg_tensor_retain(values);
    *ret_indices = sg_tensor_retain(indices);
    return SG_OK;
}

} // namespace

sg_status sg_cu_register_sort(void) {
    SG_CU_REG(aten_sort_values_stable, sort_out_k);
    SG_CU_REG(aten_topk_values, topk_out_k);
    return SG_OK;
}
