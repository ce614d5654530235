/* index.cuh: what the CUDA indexing, joining and ordering kernels share (index.cu, sort.cu):
 * element moves by size, an N-d strided geometry passed by value, device and out= checks worded
 * as kernels/cpu/index.c's, and the bounds check of index tensors. */
#ifndef SG_CU_INDEX_CUH
#define SG_CU_INDEX_CUH

#include "loops.cuh"
#include "sg_index_shape.h"

/* Elements moved as bytes: one unsigned type per element size (complex128 as two words). */
struct alignas(8) sg_cu_b16 {
    uint64_t w[2];
};

template <class F> sg_status sg_cu_visit_size(size_t es, F &&f) {
    switch (es) {
    case 1: return f(sg_cu_tag<uint8_t>{});
    case 2: return f(sg_cu_tag<uint16_t>{});
    case 4: return f(sg_cu_tag<uint32_t>{});
    case 8: return f(sg_cu_tag<uint64_t>{});
    case 16: return f(sg_cu_tag<sg_cu_b16>{});
    default: return sg_error(SG_EUNSUPPORTED, "no CUDA kernel moves %zu-byte elements", es);
    }
}

/* Sizes (outermost first) and N operands' strides (in elements), by value for a kernel. */
template <int N> struct sg_cu_nd {
    int32_t ndim;
    int64_t size[SG_MAX_DIMS];
    int64_t st[N][SG_MAX_DIMS];
};

/* The coordinate of linear index i (row-major over size) along each dim, visited innermost
 * first: f(d, c). */
template <int N, class F>
__device__ __forceinline__ void sg_cu_coords(const sg_cu_nd<N> &g, int64_t i, F &&f) {
    for (int d = g.ndim - 1; d >= 0; d--) {
        int64_t s = g.size[d], q = i / s;
        f(d, i - q * s);
        i = q;
    }
}

/* aten's ensure_nonempty: a 0-dim tensor seen as [1] */
static inline int32_t sg_cu_ne_dim(const sg_tensor *t) { return t->ndim > 0 ? t->ndim : 1; }
static inline int64_t sg_cu_ne_size(const sg_tensor *t, int32_t d) {
    return t->ndim > 0 ? t->sizes[d] : 1;
}
static inline int64_t sg_cu_ne_stride(const sg_tensor *t, int32_t d) {
    return t->ndim > 0 ? t->strides[d] : 1;
}

/* Blocks for a grid-stride loop over n elements. */
static inline unsigned sg_cu_blocks(int64_t n) { return sg_cu_grid(n, 1); }

/* SG_OK where t is on dev; otherwise aten's message for tensors on two devices. */
sg_status sg_cu_same_device(const char *op, const sg_tensor *t, sg_device dev);
/* An out= tensor of a structured op made ready for its meta's result: on self's device, of the
 * dtype (exactly, or one it casts to), resized where its shape differs. */
sg_status sg_cu_prep_out(const char *op, sg_tensor *out, const sg_meta *m, bool exact);
/* idx (int64 or int32, any device) as contiguous int64 on dev. */
sg_status sg_cu_index_i64(const char *op, const sg_tensor *idx, sg_device dev, sg_tensor **out);
/* Whether every element of idx (contiguous int64 on the current device) is in [0, bound):
 * *bad gets the first position (row-major) that is not, or -1, and *value its index. Reads
 * the answer on the host: the op must return the error before it writes anything, as the
 * CPU's does, so this waits for the stream (the only synchronisation in these kernels). */
sg_status sg_cu_find_oob(const char *op, const sg_tensor *idx, int64_t bound, int64_t *bad,
                         int64_t *value);

#endif
