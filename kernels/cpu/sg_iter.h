/* sg_iter.h: what every backend's kernels share with the CPU's: aten's dtype names, type
 * promotion, the strided iterator (shape, broadcast, promotion and dimension merging; the CPU
 * runs its loops, another backend launches its own over the same description) and casts.
 * Plain C with C++ guards, so CUDA sources include it too. */
#ifndef SG_ITER_H
#define SG_ITER_H

#include "aten.h"

#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- names (promote.c; c10::ScalarType's, "Float": the runtime's sg_dtype_c10_name) ---- */

/* caffe2::TypeMeta's name, as aten prints a tensor's dtype(): "float", "long int", "c10::Half". */
const char *sg_meta_type_name(sg_dtype t);
/* The C++ type aten's value-range checks print: "uint8_t", "int", "c10::Half". */
const char *sg_cpp_type_name(sg_dtype t);

static inline sg_dtype dtype_of(const sg_tensor *t) { return (sg_dtype)t->dtype; }

/* ---- type promotion (promote.c) ----------------------------------------------------------- */

typedef struct sg_result_type {
    sg_dtype dim, zero, wrapped;
    bool     has_dim, has_zero, has_wrapped;
} sg_result_type;

sg_dtype  sg_promote_types(sg_dtype a, sg_dtype b);
void      sg_rt_init(sg_result_type *r);
void      sg_rt_tensor(sg_result_type *r, const sg_tensor *t); /* NULL is skipped */
void      sg_rt_scalar(sg_result_type *r, sg_scalar s);
sg_dtype  sg_rt_result(const sg_result_type *r);
/* A Scalar as a 0-dim CPU tensor flagged as a wrapped number (bool, int64, float64, complex128). */
sg_status sg_scalar_tensor(sg_scalar s, sg_tensor **out);

/* ---- the strided iterator (iter.c) ---------------------------------------------------------
 * The one walker of pointwise and reduction kernels. It broadcasts the inputs to a common
 * shape, casts the inputs whose dtype is not the compute dtype (into temporaries), allocates or
 * checks (and resizes) the output, orders dimensions by the output's strides and merges those
 * that are contiguous across every operand, then calls a loop function on inner lines, in
 * parallel where the work is large. Operand 0 is the output; inputs follow. */

enum { SG_ITER_MAX = 6, SG_GRAIN = 32768 };

/* data[k]: operand k's first element of the line; strides[k]: its byte stride along it. */
typedef void (*sg_loop_fn)(void *ctx, char *const *data, const int64_t *strides, int64_t n);

/* Rationale: the scalar fields come first and only they are zeroed when an iteration is
 * built (the arrays are filled for the dims and operands in use); zeroing all 4 KB was the
 * largest cost of a 1-element op. */
typedef struct sg_iter {
    int32_t    ndim;                          /* after merging; dim 0 is innermost */
    int32_t    nops;
    int64_t    numel;
    sg_dtype   compute;                       /* the inputs' dtype as loops see them */
    sg_dtype   out_dtype;                     /* the output's dtype as loops see it */
    sg_dtype   round_to;                      /* a staged output is rounded to it first where
                                                 the real one's dtype differs (pointwise: the
                                                 result's; reductions: out_dtype) */
    sg_device  device;                        /* where the operands are (but host scalars) */
    uint32_t   host_scalars;                  /* bit k: operand k is a 0-dim CPU tensor beside
                                                 another device's (data[k] is host memory) */
    sg_tensor *out;                           /* the result (what the caller gets) */
    sg_tensor *staged;                        /* where loops write when not `out` itself */
    sg_tensor *tmp[SG_ITER_MAX];              /* temporaries to release */
    int32_t    ntmp;
    int32_t    out_ndim;                      /* the broadcast shape, outermost first */
    char      *data[SG_ITER_MAX];             /* arrays from here on: not zeroed */
    int64_t    shape[SG_MAX_DIMS];
    int64_t    stride[SG_ITER_MAX][SG_MAX_DIMS]; /* bytes */
    int64_t    out_shape[SG_MAX_DIMS];
} sg_iter;

typedef struct sg_iter_spec {
    const char      *op;        /* for messages: "add" */
    sg_tensor       *out;       /* NULL: allocate the result */
    const sg_tensor *in[SG_ITER_MAX - 1];
    int32_t          nin;
    sg_dtype         compute;   /* inputs are cast to it (see sg_compute_dtype) */
    sg_dtype         result;    /* the result's dtype when allocated; an out= must be castable */
    sg_dtype         out_dtype; /* what loops write: compute, or bool for comparisons */
    uint32_t         keep;      /* bit i: input i keeps its own dtype (not cast to compute),
                                   for a backend whose kernel reads it as it is */
    bool             to_out;    /* the inputs broadcast to out's shape (copies), rather than out
                                   being resized to the inputs' broadcast shape */
} sg_iter_spec;

/* SG_OK where out is NULL or of dtype r; else aten's error for the ops whose out= must have
 * the result's dtype exactly (the dtype-keeping unary ops: abs, neg, floor, sign, ...). */
sg_status sg_out_dtype_exact(const char *op, const sg_tensor *out, sg_dtype r);

/* Builds the iteration; *result gets a new reference to the output. */
sg_status sg_iter_build(sg_iter *it, const sg_iter_spec *s, sg_tensor **result);
/* Runs fn over every element; nothing on Meta (the build, the op's shape function, made the
 * output; a kernel whose shape work is the iterator's is its Meta kernel too). */
void      sg_iter_run(const sg_iter *it, sg_loop_fn fn, void *ctx);
/* Writes a staged output back into the real one (casting), and frees the temporaries. On
 * failure *result is released and set to NULL. */
sg_status sg_iter_finish(sg_iter *it, sg_tensor **result);
/* Frees without writing back (an error path). */
void      sg_iter_free(sg_iter *it);

/* Broadcasts a and b (outermost first) into out; false where they cannot be. */
bool      sg_broadcast_shape(const int64_t *a, int32_t na, const int64_t *b, int32_t nb,
                             int64_t *out, int32_t *nout);
/* "[2, 3]" into buf. */
const char *sg_shape_str(const int64_t *sizes, int32_t n, char *buf, size_t len);
/* The strides aten gives a new tensor of shape (n dims) that follows the layout of ops (nops
 * tensors, NULL skipped, each right-aligned to shape): TensorIterator's order for the outputs
 * it allocates, and with one operand empty_like's for a tensor that is not dense. Dims go
 * innermost first as the first operand whose strides tell two apart orders them (a broadcast
 * dim tells nothing; of equal strides the smaller size goes inside); the strides are dense in
 * that order. Returns false where the order is the contiguous one. */
bool        sg_follow_strides(const int64_t *shape, int32_t n, const sg_tensor *const *ops,
                              int32_t nops, int64_t *strides);
/* m (its sizes set) takes the layout of a, b, c (NULL skipped) as TensorIterator gives it:
 * the meta function of an op whose kernel runs the iterator. */
void        sg_meta_follow(sg_meta *m, const sg_tensor *a, const sg_tensor *b,
                           const sg_tensor *c);

/* ---- the iterator's reduction mode ----------------------------------------------------------
 * One driver for every reduction. spec.out is required and has the input's ndim with size 1
 * along the reduced dims (the keepdim form; a view of the real result), so its stride there is
 * 0: a dim is reduced exactly where the output's stride is 0. in[0] is the reduced input; any
 * further operands are shaped like the output and travel beside it (a per-output parameter
 * such as a mean the loops read, or a second result such as max's indices that `finish`
 * writes). Inputs are never cast (`compute` is ignored: loops read each operand's own dtype),
 * the output is never resized, and dims are ordered by the input's strides, so the input is
 * read in memory order.
 *
 * sg_iter_reduce splits the dims into kept dims K and reduced dims R. Where the input's
 * innermost dim is reduced, each output is the reduction of lines along R's innermost dim
 * (`inner`, a contiguous line being the tight loop). Where it is kept, a block of outputs along
 * K's innermost dim advances together, one input row at a time (`outer`, a loop across
 * outputs). Accumulators are 8-byte values (sg_rval) with an optional int64 index each (the
 * position along the reduced dims, for argmax; correct where R is one dim). Work runs in
 * parallel over blocks of outputs when there are enough of them, otherwise over ranges of the
 * reduced dims with per-thread partials that `combine` joins in order. */

typedef union sg_rval {
    double   f;
    int64_t  i;
    uint64_t u;
} sg_rval;

typedef struct sg_reducer {
    /* v[0, n) (and idx, where used) = the identity */
    void (*init)(void *ctx, sg_rval *v, int64_t *idx, int64_t n);
    /* v[0] <op>= the n input elements at in, stride bytes apart, whose reduced positions start at
     * i0; op[k] (k >= 2) is operand k's element of this output */
    void (*inner)(void *ctx, sg_rval *v, int64_t *idx, const char *in, int64_t stride,
                  int64_t n, int64_t i0, char *const *op);
    /* v[j] <op>= in[r * rstride + j * stride] for j < n, r < rows: rows at reduced positions
     * i0, i0 + 1, ...; op[k] + j * ostride[k] is operand k's element of output j */
    void (*outer)(void *ctx, sg_rval *v, int64_t *idx, const char *in, int64_t stride,
                  int64_t n, int64_t rstride, int64_t rows, int64_t i0, char *const *op,
                  const int64_t *ostride);
    /* a[j] = a[j] <op> b[j] for j < n, where b's elements follow a's in the reduction */
    void (*combine)(void *ctx, sg_rval *a, int64_t *ai, const sg_rval *b, const int64_t *bi,
                    int64_t n);
    /* writes outputs j < n (op[0] + j * ostride[0], and operands 2.. likewise) from v[j] (and
     * idx[j]); count is how many input elements each output reduced */
    void (*finish)(void *ctx, const sg_rval *v, const int64_t *idx, int64_t n, int64_t count,
                   char *const *op, const int64_t *ostride);
} sg_reducer;

/* The dims a reduction over a dim list covers: mask[d] (SG_MAX_DIMS entries) for each of t's
 * dims; n == 0 (None or []) means all. aten's messages for a dim out of range or repeated. */
sg_status sg_reduce_dims(const sg_tensor *t, const int64_t *dims, int32_t n, bool *mask);
/* Builds a reduction (above); *result gets a new reference to spec.out. */
sg_status sg_iter_build_reduce(sg_iter *it, const sg_iter_spec *s, sg_tensor **result);
/* Runs a reduction built by sg_iter_build_reduce (nothing on Meta, as sg_iter_run). */
void      sg_iter_reduce(const sg_iter *it, const sg_reducer *r, void *ctx);

/* ---- casts (cast.c) ------------------------------------------------------------------------- */

/* dst = src elementwise with conversion; same shape (broadcast src allowed), both on one
 * device: the CPU, or a device whose backend set its own (sg_set_cast_copy). */
sg_status sg_cast_copy_(sg_tensor *dst, const sg_tensor *src);
typedef sg_status (*sg_cast_copy_fn)(sg_tensor *dst, const sg_tensor *src);
/* Sets the device type's sg_cast_copy_ (a backend's init does); the iterator's casts and
 * staging then work for its tensors. */
void      sg_set_cast_copy(sg_device_type type, sg_cast_copy_fn fn);
/* Whether the device type has one (the CPU always). */
bool      sg_has_cast_copy(sg_device_type type);
/* A contiguous copy of t in dtype (a new reference to t where it is that already and
 * contiguous). */
sg_status sg_cast(const sg_tensor *t, sg_dtype dtype, sg_tensor **out);

/* Wraps a negative dim; false where out of range. */
static inline bool sg_wrap_dim(int64_t *dim, int32_t ndim) {
    int32_t n = ndim > 0 ? ndim : 1;
    if (*dim < -n || *dim >= n) return false;
    if (*dim < 0) *dim += n;
    return true;
}

#ifdef __cplusplus
}
#endif
#endif
