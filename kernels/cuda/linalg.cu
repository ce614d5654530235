/* linalg.cu: matrix products on CUDA: the out kernels of mm, addmm, bmm and baddbmm (the
 * structured ops; their functional and in-place variants are generated over them, and matmul,
 * matmul.out, linear and linear.out are the CPU library's composites over the dispatched ops,
 * registered for CompositeImplicit/ExplicitAutograd, so they run here unchanged).
 *
 * One engine computes C = alpha * A.B + beta * C over a batch of strided matrices:
 *  - float32, float16, bfloat16 and float64 through cuBLASLt (16-bit inputs accumulate in
 *    float32 and are written in their own dtype; float32 uses TF32 only where
 *    sg_cuda_set_allow_tf32(true) said so, as torch.backends.cuda.matmul.allow_tf32).
 *    cuBLASLt is column-major: a row-major C (m x n) is its C^T, so it computes C^T = B^T.A^T
 *    with the operands swapped. A matrix whose rows or columns are contiguous goes as it is
 *    (the transpose flags say which), any other is copied contiguous first. A C that is not
 *    row- or column-major, or that overlaps an input, is staged in a fresh tensor.
 *  - integers (and whatever cuBLASLt finds no algorithm for, and k == 0) through a plain tiled
 *    kernel accumulating modulo 2^64 for integers (aten's CPU wraparound; aten's CUDA refuses
 *    integer products, but the CPU kernels are the specification here) and in float32/float64
 *    for the floats.
 * beta == 0 never reads C (BLAS's rule), so NaN in an uninitialised out does not propagate.
 *
 * cuBLASLt state: a handle and a 32 MiB workspace per (device, stream), created at first use
 * and kept for the process; and, per problem (device, dtype, tf32, transposes, sizes, leading
 * dimensions, batch strides, pointer alignments, bias epilogue), the matmul and layout
 * descriptors with the heuristic's best algorithm, so a repeated call makes no heuristic query.
 * addmm's self when it is one row repeated with beta 1 (linear's bias) is added by cuBLASLt's
 * bias epilogue rather than copied into the result first, as aten's CUDA addmm does.
 * A decision table (docs/gemm.md) may name the algorithm instead (sg_cuda_mm_lt and its
 * kin): it is made from its configuration and checked once per problem, and where cuBLASLt
 * refuses it for the problem the heuristic's is used. A table may also pick cuBLAS itself
 * (sg_cuda_mm_cublas and its kin: cublasGemmEx, as PyTorch calls it), through a handle per
 * context made at its first use. Both caches are small maps under a mutex; entries are never
 * freed, so a pointer taken under the lock stays valid after it. */
#include "loops.cuh"
#include "sg_mm_shape.h"
#include "sg_aten_cuda.h"
#include "sg_lt_config.h"

#include <cublasLt.h>
#include <cublas_v2.h>

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

/* ---- the TF32 switch ------------------------------------------------------------------------- */

static bool g_allow_tf32; /* off by default, as PyTorch's */

extern "C" sg_status sg_cuda_set_allow_tf32(bool allow) {
    __atomic_store_n(&g_allow_tf32, allow, __ATOMIC_RELAXED);
    return SG_OK;
}

extern "C" bool sg_cuda_allow_tf32(void) {
    return __atomic_load_n(&g_allow_tf32, __ATOMIC_RELAXED);
}

namespace {

/* ---- the tiled fallback kernel --------------------------------------------------------------- */

/* One operand of a batched product: its first element and element strides. */
struct operand {
    char   *p;
    int64_t bs, rs, cs; /* batch, row, column */
};

template <class Acc> struct plain_job {
    int64_t batch, m, n, k;
    operand a, b, c;
    Acc     alpha, beta;
    bool    beta0;
};

enum { TILE = 16 };

/* Integers accumulate as uint64 (modular, as the CPU's CV_U64), floats in float or double. */
template <class T> struct plain_acc { using type = float; };
template <> struct plain_acc<double> { using type = double; };
template <> struct plain_acc<uint8_t> { using type = uint64_t; };
template <> struct plain_acc<int8_t> { using type = uint64_t; };
template <> struct plain_acc<int16_t> { using type = uint64_t; };
template <> struct plain_acc<int32_t> { using type = uint64_t; };
template <> struct plain_acc<int64_t> { using type = uint64_t; };

template <class Acc, class T> __device__ __forceinline__ Acc widen(T v) {
    if constexpr (std::is_same<Acc, uint64_t>::value) return (uint64_t)(int64_t)v;
    else return sg_cu_convert<Acc>(v);
}
template <class T, class Acc> __device__ __forceinline__ T narrow(Acc v) {
    if constexpr (std::is_same<Acc, uint64_t>::value) return (T)v; /* modular, as the CPU's */
    else return sg_cu_convert<T>(v);
}

/* Blocks of TILE x TILE threads; blockIdx.x walks the output tiles, blockIdx.y the batch (both
 * grid-stride, so any size fits the grid's limits). Loops are uniform per block, so the
 * barriers are reached by every thread. */
template <class T, class Acc>
__global__ void __launch_bounds__(TILE *TILE) plain_gemm(const plain_job<Acc> g) {
    __shared__ Acc sa[TILE][TILE + 1], sb[TILE][TILE + 1];
    const int      tx = threadIdx.x, ty = threadIdx.y;
    const int64_t  tm = (g.m + TILE - 1) / TILE, tn = (g.n + TILE - 1) / TILE;
    for (int64_t bi = blockIdx.y; bi < g.batch; bi += gridDim.y) {
        const T *a = reinterpret_cast<const T *>(g.a.p) + bi * g.a.bs;
        const T *b = reinterpret_cast<const T *>(g.b.p) + bi * g.b.bs;
        T       *c = reinterpret_cast<T *>(g.c.p) + bi * g.c.bs;
        for (int64_t tile = blockIdx.x; tile < tm * tn; tile += gridDim.x) {
            int64_t i = (tile / tn) * TILE + ty, j = (tile % tn) * TILE + tx;
            Acc     acc = Acc(0);
            for (int64_t p0 = 0; p0 < g.k; p0 += TILE) {
                int64_t pa = p0 + tx, pb = p0 + ty;
                sa[ty][tx] = i < g.m && pa < g.k ? widen<Acc>(a[i * g.a.rs + pa * g.a.cs]) : Acc(0);
                sb[ty][tx] = pb < g.k && j < g.n ? widen<Acc>(b[pb * g.b.rs + j * g.b.cs]) : Acc(0);
                __syncthreads();
#pragma unroll
                for (int q = 0; q < TILE; q++) acc += sa[ty][q] * sb[q][tx];
                __syncthreads();
            }
            if (i < g.m && j < g.n) {
                T  *o = c + i * g.c.rs + j * g.c.cs;
                Acc v = g.alpha * acc;
                if (!g.beta0) v += g.beta * widen<Acc>(*o);
                *o = narrow<T>(v);
            }
        }
    }
}

/* A tuner's question: instead of running, the first `cap` algorithms of the heuristic for the
 * problem, as configurations (sg_cuda_gemm_lt_candidates). */
struct lt_probe {
    int32_t            cap, got;
    sg_gemm_lt_config *cfg;
};

struct gemm_job {
    sg_dtype  dtype;
    int64_t   batch, m, n, k;
    operand   a, b, c; /* a: m x k, b: k x n, c: m x n, row-major (ld in c.rs) */
    sg_scalar alpha, beta;
    bool      beta0;
    const sg_gemm_lt_config *cfg;  /* the algorithm a table chose; NULL: the heuristic's */
    bool                     blas; /* through cuBLAS's own choice (a table's), not cuBLASLt */
    const void              *bias; /* a row of n added to every row of C by cuBLASLt's bias
                                    * epilogue (beta0 then; batch 1); NULL: none */
    lt_probe                *probe;
};

sg_status run_plain(const gemm_job &g, cudaStream_t s) {
    return sg_cu_visit(g.dtype, SG_CU_FLOATS | SG_CU_INTS, "mm", [&](auto tag) {
        using T = typename decltype(tag)::type;
        using Acc = typename plain_acc<T>::type;
        plain_job<Acc> j;
        j.batch = g.batch, j.m = g.m, j.n = g.n, j.k = g.k;
        j.a = g.a, j.b = g.b, j.c = g.c;
        if constexpr (std::is_same<Acc, uint64_t>::value) {
            j.alpha = (uint64_t)sg_mm_scalar_to_int(g.alpha);
            j.beta = (uint64_t)sg_mm_scalar_to_int(g.beta);
            j.beta0 = g.beta0 || j.beta == 0;
        } else {
            j.alpha = (Acc)sg_scalar_to_double(g.alpha);
            j.beta = (Acc)sg_scalar_to_double(g.beta);
            j.beta0 = g.beta0;
        }
        int64_t  tiles = sg_cu_ceil_div(g.m, TILE) * sg_cu_ceil_div(g.n, TILE);
        int64_t  cap = (int64_t)sg_cu_sm_count() * 16;
        unsigned gx = (unsigned)(tiles < cap ? tiles : cap);
        unsigned gy = (unsigned)(g.batch < 65535 ? g.batch : 65535);
        plain_gemm<T, Acc><<<dim3(gx, gy), dim3(TILE, TILE), 0, s>>>(j);
        return sg_cu_check("mm");
    });
}

/* ---- cuBLASLt: handles and workspaces per (device, stream) ----------------------------------- */

enum : size_t { WORKSPACE_BYTES = (size_t)32 << 20 };

struct lt_ctx {
    int              dev;
    cudaStream_t     stream;
    cublasLtHandle_t handle;
    void            *work;
    size_t           work_bytes;
    cublasHandle_t   blas; /* made at the first cuBLAS product here; shares the workspace, as
                            * both run in this stream's order */
};

std::mutex                           g_ctx_mu;
std::vector<std::unique_ptr<lt_ctx>> g_ctxs;

sg_status lt_fail(cublasStatus_t s, const char *what) {
    return sg_error(SG_EDEVICE, "mm: cuBLASLt %s failed: %s (%s)", what, cublasLtGetStatusName(s),
                    cublasLtGetStatusString(s));
}

/* The context of the current device and stream. The workspace is plain device memory (not from
 * the stream-ordered pool) so that it outlives any stream; its one allocation per (device,
 * stream) happens at the first product there. */
sg_status lt_context(lt_ctx **out) {
    thread_local lt_ctx *last;
    int                  dev = 0;
    cudaError_t          e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return sg_cu_status(e, "mm");
    cudaStream_t s = sg_cu_stream();
    if (last && last->dev == dev && last->stream == s) {
        *out = last;
        return SG_OK;
    }
    std::lock_guard<std::mutex> lock(g_ctx_mu);
    for (auto &c : g_ctxs)
        if (c->dev == dev && c->stream == s) {
            *out = last = c.get();
            return SG_OK;
        }
    std::unique_ptr<lt_ctx> c(new lt_ctx{dev, s, nullptr, nullptr, 0, nullptr});
    cublasStatus_t          bs = cublasLtCreate(&c->handle);
    if (bs != CUBLAS_STATUS_SUCCESS) return lt_fail(bs, "handle creation");
    if (cudaMalloc(&c->work, WORKSPACE_BYTES) == cudaSuccess) {
        c->work_bytes = WORKSPACE_BYTES;
    } else { /* no room: run without a workspace (fewer algorithms) rather than fail */
        (void)cudaGetLastError();
        c->work = nullptr;
    }
    g_ctxs.push_back(std::move(c));
    *out = last = g_ctxs.back().get();
    return SG_OK;
}

/* ---- cuBLASLt: plans per problem ------------------------------------------------------------ */

struct plan_key {
    int32_t dev, dtype, tf32, ta, tb;
    int32_t align_a, align_b, align_c;
    int32_t has_cfg, bias;
    int32_t zero;          /* the int64s follow with no padding (memcmp, hash) */
    sg_gemm_lt_config cfg; /* zero without has_cfg */
    int64_t m, n, k, lda, ldb, ldc, batch, sa, sb, sc;
    bool operator==(const plan_key &o) const { return memcmp(this, &o, sizeof *this) == 0; }
};
static_assert(sizeof(plan_key) == 11 * 4 + sizeof(sg_gemm_lt_config) + 10 * 8,
              "plan_key has no padding");

struct plan_hash {
    size_t operator()(const plan_key &k) const {
        static_assert(sizeof k % 8 == 0, "plan_key hashes as 64-bit words");
        uint64_t w[sizeof k / 8], h = 1469598103934665603ull; /* FNV-1a over words */
        memcpy(w, &k, sizeof k);
        for (uint64_t x : w) h = (h ^ x) * 1099511628211ull;
        return (size_t)h;
    }
};

struct plan {
    cublasLtMatmulDesc_t   op = nullptr;
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
    cublasLtMatmulAlgo_t   algo;
    bool                   found = false; /* false: no algorithm; the plain kernel runs */
    std::mutex             bias_mu;       /* the bias pointer is the descriptor's: one call at a
                                           * time sets it and launches */
    ~plan() {
        if (lc) cublasLtMatrixLayoutDestroy(lc);
        if (lb) cublasLtMatrixLayoutDestroy(lb);
        if (la) cublasLtMatrixLayoutDestroy(la);
        if (op) cublasLtMatmulDescDestroy(op);
    }
};

enum { MAX_PLANS = 4096 }; /* beyond it, plans are made per call and dropped */

std::mutex                                                     g_plan_mu;
std::unordered_map<plan_key, std::unique_ptr<plan>, plan_hash> g_plans;

/* The largest power of two (at most 256) dividing every address the operand's matrices start
 * at: what the heuristic may assume. */
int32_t alignment(const void *p, int64_t batch_stride_bytes, int64_t batch) {
    uint64_t bits = (uint64_t)(uintptr_t)p | 256u;
    if (batch > 1) bits |= (uint64_t)batch_stride_bytes;
    return (int32_t)(bits & (~bits + 1));
}

cudaDataType_t lt_type(sg_dtype t) {
#define LT_TYPE(NAME, NUM, KIND, SIZE, CTYPE, SUF, DL, CU, ...) \
    case SG_##NAME: return CUDA_##CU;
    switch (t) {
        SG_DTYPES(LT_TYPE)
    default: return CUDA_R_32F;
    }
#undef LT_TYPE
}

sg_status layout(cublasLtMatrixLayout_t *l, cudaDataType_t t, int64_t rows, int64_t cols,
                 int64_t ld, int64_t batch, int64_t stride) {
    cublasStatus_t s = cublasLtMatrixLayoutCreate(l, t, (uint64_t)rows, (uint64_t)cols, ld);
    if (s != CUBLAS_STATUS_SUCCESS) return lt_fail(s, "layout creation");
    if (batch > 1) {
        int32_t count = (int32_t)batch;
        if ((s = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                  sizeof count)) != CUBLAS_STATUS_SUCCESS ||
            (s = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                  &stride, sizeof stride)) != CUBLAS_STATUS_SUCCESS)
            return lt_fail(s, "layout attribute");
    }
    return SG_OK;
}

/* Whether the algorithm k's configuration names suits p's problem: made, checked by cuBLASLt
 * (alignment, sizes, workspace) and set as p's. */
bool configured(const plan_key &k, const lt_ctx *ctx, cudaDataType_t dt, cublasComputeType_t ct,
                cudaDataType_t st, plan *p) {
    cublasLtMatmulAlgo_t            algo;
    cublasLtMatmulHeuristicResult_t res;
    if (cublasLtMatmulAlgoInit(ctx->handle, ct, st, dt, dt, dt, dt, k.cfg.algo, &algo) !=
            CUBLAS_STATUS_SUCCESS ||
        sg_lt_config_set(&algo, &k.cfg) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatmulAlgoCheck(ctx->handle, p->op, p->la, p->lb, p->lc, p->lc, &algo, &res) !=
            CUBLAS_STATUS_SUCCESS ||
        res.workspaceSize > ctx->work_bytes)
        return false;
    /* the check sees the descriptors, not the pointers: the alignment the algorithm needs of
     * each operand (cuBLASLt's A is our B) must be what this call's addresses have */
    const cublasLtMatmulAlgoCapAttributes_t need[4] = {
        CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES};
    const int32_t have[4] = {k.align_a, k.align_b, k.align_c, k.align_c};
    for (int i = 0; i < 4; i++) {
        uint32_t min = 0;
        size_t   got = 0;
        if (cublasLtMatmulAlgoCapGetAttribute(&algo, need[i], &min, sizeof min, &got) !=
                CUBLAS_STATUS_SUCCESS ||
            (int64_t)min > have[i])
            return false;
    }
    p->algo = algo;
    p->found = true;
    return true;
}

struct lt_types {
    cudaDataType_t      dt, st;
    cublasComputeType_t ct;
};

lt_types types_of(const plan_key &k) {
    lt_types t = {lt_type((sg_dtype)k.dtype), CUDA_R_32F, CUBLAS_COMPUTE_32F};
    if (k.dtype == SG_FLOAT64) t.ct = CUBLAS_COMPUTE_64F, t.st = CUDA_R_64F;
    else if (k.dtype == SG_FLOAT32 && k.tf32) t.ct = CUBLAS_COMPUTE_32F_FAST_TF32;
    return t;
}

/* The descriptors of key k's problem into p. */
sg_status describe(const plan_key &k, plan *p) {
    lt_types       t = types_of(k);
    cublasStatus_t s = cublasLtMatmulDescCreate(&p->op, t.ct, t.st);
    if (s != CUBLAS_STATUS_SUCCESS) return lt_fail(s, "descriptor creation");
    cublasOperation_t ta = k.ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = k.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    if ((s = cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta)) !=
            CUBLAS_STATUS_SUCCESS ||
        (s = cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb)) !=
            CUBLAS_STATUS_SUCCESS ||
        (k.bias && (s = cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi,
                                                       sizeof epi)) != CUBLAS_STATUS_SUCCESS))
        return lt_fail(s, "descriptor attribute");
    /* cuBLASLt's D (k.m x k.n, column-major) = op(A) (k.m x k.k) . op(B) (k.k x k.n) */
    sg_status r;
    if ((r = layout(&p->la, t.dt, k.ta ? k.k : k.m, k.ta ? k.m : k.k, k.lda, k.batch, k.sa)) ||
        (r = layout(&p->lb, t.dt, k.tb ? k.n : k.k, k.tb ? k.k : k.n, k.ldb, k.batch, k.sb)) ||
        (r = layout(&p->lc, t.dt, k.m, k.n, k.ldc, k.batch, k.sc)))
        return r;
    return SG_OK;
}

/* The heuristic's first `cap` algorithms for p's problem (its descriptors made) into res; their
 * count, 0 where it has none or refuses the query. */
int heuristic(const plan_key &k, const lt_ctx *ctx, const plan *p, int cap,
              cublasLtMatmulHeuristicResult_t *res) {
    cublasLtMatmulPreference_t pref;
    if (cublasLtMatmulPreferenceCreate(&pref) != CUBLAS_STATUS_SUCCESS) return 0;
    uint64_t ws = ctx->work_bytes;
    uint32_t al[3] = {(uint32_t)k.align_a, (uint32_t)k.align_b, (uint32_t)k.align_c};
    const cublasLtMatmulPreferenceAttributes_t which[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                         sizeof ws);
    for (int i = 0; i < 4; i++)
        cublasLtMatmulPreferenceSetAttribute(pref, which[i], &al[i < 3 ? i : 2], sizeof al[0]);
    int            n = 0;
    cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(ctx->handle, p->op, p->la, p->lb, p->lc,
                                                      p->lc, pref, cap, res, &n);
    cublasLtMatmulPreferenceDestroy(pref);
    if (s != CUBLAS_STATUS_SUCCESS) return 0;
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (res[i].state == CUBLAS_STATUS_SUCCESS) res[kept++] = res[i];
    return kept;
}

/* Builds the descriptors for key k and takes its configured algorithm where it has one and
 * cuBLASLt accepts it, else the heuristic's best. No algorithm (NOT_SUPPORTED: this type or
 * layout has none; or any other refusal of the query) sends the problem to the plain kernel,
 * which is always right if slower. */
sg_status make_plan(const plan_key &k, const lt_ctx *ctx, plan *p) {
    sg_status r = describe(k, p);
    if (r) return r;
    lt_types t = types_of(k);
    if (k.has_cfg && configured(k, ctx, t.dt, t.ct, t.st, p)) return SG_OK;
    cublasLtMatmulHeuristicResult_t res;
    p->found = heuristic(k, ctx, p, 1, &res) == 1;
    if (p->found) p->algo = res.algo;
    return SG_OK;
}

/* The job as BLAS sees it (cuBLASLt and cuBLAS alike): column-major C^T (n x m) =
 * op(B^T) (n x k) . op(A^T) (k x m), so BLAS's A is our B and its B our A; ta (tb) where our B
 * (A) is column-major. False where C is not row-major or A or B is neither. */
struct blas_shape {
    int64_t lda, ldb, ldc; /* ours: A's, B's, C's */
    bool    ta, tb;
};

bool blas_shape_of(const gemm_job &g, blas_shape *v) {
    bool b_rm = sg_mm_row_major(g.k, g.n, g.b.rs, g.b.cs, &v->ldb);
    bool b_cm = !b_rm && sg_mm_row_major(g.n, g.k, g.b.cs, g.b.rs, &v->ldb);
    bool a_rm = sg_mm_row_major(g.m, g.k, g.a.rs, g.a.cs, &v->lda);
    bool a_cm = !a_rm && sg_mm_row_major(g.k, g.m, g.a.cs, g.a.rs, &v->lda);
    v->ta = b_cm, v->tb = a_cm;
    return sg_mm_row_major(g.m, g.n, g.c.rs, g.c.cs, &v->ldc) && (b_rm || b_cm) && (a_rm || a_cm);
}

/* alpha and beta as BLAS takes them: double for float64, else float (the compute type's) */
struct blas_scalars {
    double      d[2];
    float       f[2];
    const void *alpha, *beta;
    explicit blas_scalars(const gemm_job &g) {
        d[0] = sg_scalar_to_double(g.alpha), d[1] = g.beta0 ? 0.0 : sg_scalar_to_double(g.beta);
        f[0] = (float)d[0], f[1] = (float)d[1];
        bool dbl = g.dtype == SG_FLOAT64;
        alpha = dbl ? (const void *)&d[0] : (const void *)&f[0];
        beta = dbl ? (const void *)&d[1] : (const void *)&f[1];
    }
    blas_scalars(const blas_scalars &) = delete; /* alpha and beta point into it */
};

/* Runs the job through cuBLASLt; *done false where no algorithm fits (the caller then runs the
 * plain kernel). */
sg_status run_lt(const gemm_job &g, cudaStream_t stream, bool *done) {
    *done = false;
    int64_t    es = (int64_t)sg_dtype_size(g.dtype);
    blas_shape v;
    if (!blas_shape_of(g, &v) || g.batch > INT32_MAX) return SG_OK;

    lt_ctx   *ctx;
    sg_status st = lt_context(&ctx);
    if (st) return st;
    plan_key k;
    memset(&k, 0, sizeof k);
    k.dev = ctx->dev;
    k.dtype = g.dtype;
    k.tf32 = g.dtype == SG_FLOAT32 && sg_cuda_allow_tf32();
    k.ta = v.ta, k.tb = v.tb; /* cuBLASLt's A is our B, its B our A */
    k.m = g.n, k.n = g.m, k.k = g.k;
    k.lda = v.ldb, k.ldb = v.lda, k.ldc = v.ldc;
    k.batch = g.batch;
    if (g.batch > 1) k.sa = g.b.bs, k.sb = g.a.bs, k.sc = g.c.bs;
    k.align_a = alignment(g.b.p, g.b.bs * es, g.batch);
    k.align_b = alignment(g.a.p, g.a.bs * es, g.batch);
    k.align_c = alignment(g.c.p, g.c.bs * es, g.batch);
    if (g.cfg) k.has_cfg = 1, k.cfg = *g.cfg;
    k.bias = g.bias != nullptr;

    if (g.probe) { /* the candidates, not the product */
        plan                            q;
        cublasLtMatmulHeuristicResult_t res[64];
        if ((st = describe(k, &q))) return st;
        int n = heuristic(k, ctx, &q, g.probe->cap < 64 ? g.probe->cap : 64, res);
        for (int i = 0; i < n; i++)
            if (sg_lt_config_get(&res[i].algo, &g.probe->cfg[g.probe->got]))
                g.probe->got++;
        *done = n > 0 || !k.bias; /* no epilogue algorithm: the call would run without it */
        return SG_OK;
    }

    plan                 *p = nullptr;
    std::unique_ptr<plan> own;
    {
        std::lock_guard<std::mutex> lock(g_plan_mu);
        auto                        it = g_plans.find(k);
        if (it != g_plans.end()) p = it->second.get();
    }
    if (!p) {
        own.reset(new plan);
        if ((st = make_plan(k, ctx, own.get()))) return st;
        std::lock_guard<std::mutex> lock(g_plan_mu);
        auto                        it = g_plans.find(k);
        if (it != g_plans.end()) {
            p = it->second.get(); /* another thread made it meanwhile; ours is dropped */
        } else if (g_plans.size() < MAX_PLANS) {
            p = own.get();
            g_plans.emplace(k, std::move(own));
        } else {
            p = own.get();
        }
    }
    if (!p->found) return SG_OK;

    blas_scalars   sc(g);
    const void    *al = sc.alpha, *be = sc.beta;
    cublasStatus_t s;
    if (g.bias) {
        std::lock_guard<std::mutex> lock(p->bias_mu);
        s = cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g.bias,
                                           sizeof g.bias);
        if (s == CUBLAS_STATUS_SUCCESS)
            s = cublasLtMatmul(ctx->handle, p->op, al, g.b.p, p->la, g.a.p, p->lb, be, g.c.p,
                               p->lc, g.c.p, p->lc, &p->algo, ctx->work, ctx->work_bytes, stream);
    } else {
        s = cublasLtMatmul(ctx->handle, p->op, al, g.b.p, p->la, g.a.p, p->lb, be, g.c.p, p->lc,
                           g.c.p, p->lc, &p->algo, ctx->work, ctx->work_bytes, stream);
    }
    /* the caller's other path takes it; for the bias epilogue, the path of a copy and beta,
     * which surfaces any fault of the device itself */
    if (s == CUBLAS_STATUS_NOT_SUPPORTED || (g.bias && s != CUBLAS_STATUS_SUCCESS)) return SG_OK;
    if (s != CUBLAS_STATUS_SUCCESS) return lt_fail(s, "matmul");
    *done = true;
    return SG_OK;
}

/* Runs the job through cuBLAS (cublasGemmEx: what PyTorch's eager products call, with its own
 * choice of kernel); *done false where the layout or sizes do not suit it. */
sg_status run_blas(const gemm_job &g, cudaStream_t stream, bool *done) {
    *done = false;
    blas_shape    v;
    const int64_t big = INT32_MAX; /* cuBLAS takes int sizes */
    if (!blas_shape_of(g, &v) || g.m > big || g.n > big || g.k > big || v.lda > big ||
        v.ldb > big || v.ldc > big || g.batch > big)
        return SG_OK;
    lt_ctx   *ctx;
    sg_status st = lt_context(&ctx);
    if (st) return st;
    /* a context is its stream's, shared by threads: the handle is made once under the lock */
    cublasHandle_t blas = __atomic_load_n(&ctx->blas, __ATOMIC_ACQUIRE);
    if (!blas) {
        std::lock_guard<std::mutex> lock(g_ctx_mu);
        cublasStatus_t              bs = CUBLAS_STATUS_SUCCESS;
        if (!(blas = ctx->blas) && (bs = cublasCreate(&blas)) == CUBLAS_STATUS_SUCCESS) {
            if ((bs = cublasSetStream(blas, ctx->stream)) == CUBLAS_STATUS_SUCCESS && ctx->work)
                bs = cublasSetWorkspace(blas, ctx->work, ctx->work_bytes);
            if (bs == CUBLAS_STATUS_SUCCESS) __atomic_store_n(&ctx->blas, blas, __ATOMIC_RELEASE);
            else cublasDestroy(blas);
        }
        if (bs != CUBLAS_STATUS_SUCCESS)
            return sg_error(SG_EDEVICE, "mm: cuBLAS handle creation failed: %s",
                            cublasGetStatusString(bs));
    }
    cudaDataType_t      dt = lt_type(g.dtype);
    cublasComputeType_t ct = g.dtype == SG_FLOAT64 ? CUBLAS_COMPUTE_64F
                             : g.dtype == SG_FLOAT32 && sg_cuda_allow_tf32()
                                 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                 : CUBLAS_COMPUTE_32F;
    blas_scalars      sc(g);
    cublasOperation_t ta = v.ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = v.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    int               n = (int)g.n, m = (int)g.m, k = (int)g.k;
    cublasStatus_t    s =
        g.batch == 1
            ? cublasGemmEx(blas, ta, tb, n, m, k, sc.alpha, g.b.p, dt, (int)v.ldb, g.a.p, dt,
                           (int)v.lda, sc.beta, g.c.p, dt, (int)v.ldc, ct,
                           CUBLAS_GEMM_DEFAULT_TENSOR_OP)
            : cublasGemmStridedBatchedEx(blas, ta, tb, n, m, k, sc.alpha, g.b.p, dt, (int)v.ldb,
                                         g.b.bs, g.a.p, dt, (int)v.lda, g.a.bs, sc.beta, g.c.p,
                                         dt, (int)v.ldc, g.c.bs, (int)g.batch, ct,
                                         CUBLAS_GEMM_DEFAULT_TENSOR_OP);
    (void)stream; /* the handle's stream is the context's, this one */
    if (s == CUBLAS_STATUS_NOT_SUPPORTED) return SG_OK; /* cuBLASLt or the plain kernel */
    if (s != CUBLAS_STATUS_SUCCESS)
        return sg_error(SG_EDEVICE, "mm: cublasGemmEx failed: %s", cublasGetStatusString(s));
    *done = true;
    return SG_OK;
}

/* Runs the job: C = alpha * A.B + beta * C for every matrix of the batch. A job with a bias
 * (row-major C) or a probe runs through cuBLASLt alone: *done false where it could not. */
sg_status gemm_run(gemm_job g, bool *done = nullptr) {
    if (done) *done = false;
    if (g.bias || g.probe) {
        if (!done || g.m == 0 || g.n == 0 || g.k == 0 || (g.bias && g.batch != 1) ||
            !sg_dtype_is_floating(g.dtype))
            return SG_OK;
        return run_lt(g, sg_cu_stream(), done);
    }
    if (g.m == 0 || g.n == 0 || g.batch == 0) return SG_OK;
    int64_t ld;
    /* A column-major C: compute C^T = B^T . A^T, whose C is row-major. */
    if (!sg_mm_row_major(g.m, g.n, g.c.rs, g.c.cs, &ld)) {
        operand at = {g.a.p, g.a.bs, g.a.cs, g.a.rs}, bt = {g.b.p, g.b.bs, g.b.cs, g.b.rs};
        g.c = operand{g.c.p, g.c.bs, g.c.cs, g.c.rs};
        g.a = bt, g.b = at;
        int64_t tmp = g.m;
        g.m = g.n, g.n = tmp;
    }
    cudaStream_t s = sg_cu_stream();
    bool         floating = sg_dtype_is_floating(g.dtype);
    if (floating && g.k > 0) {
        bool      done = false;
        sg_status st = g.blas ? run_blas(g, s, &done) : SG_OK;
        if (!st && !done) st = run_lt(g, s, &done);
        if (st || done) return st;
    }
    return run_plain(g, s);
}

/* ---- mm_compute ------------------------------------------------------------------------------ */

sg_status same_device(const char *op, const sg_tensor *r, const sg_tensor *x) {
    if (!x || sg_device_eq(r->device, x->device)) return SG_OK;
    return sg_error(SG_EINVAL, "%s: Expected all tensors to be on the same device, but found at "
                               "least two devices, %s:%d and %s:%d!",
                    op, sg_device_type_name((sg_device_type)r->device.type), r->device.index,
                    sg_device_type_name((sg_device_type)x->device.type), x->device.index);
}

/* t itself where its matrices suit a gemm (rows or columns contiguous), else a contiguous copy
 * (*owned gets the reference to release). */
sg_status usable(sg_tensor *t, sg_tensor **use, sg_tensor **owned) {
    *owned = nullptr;
    if (sg_mm_matrix_ok(t)) {
        *use = t;
        return SG_OK;
    }
    sg_status st = sg_tensor_contiguous(t, owned);
    *use = *owned;
    return st;
}

/* Whether self (expanded to w's m x n) is one row of w's dtype repeated, beta 1: then cuBLASLt's
 * bias epilogue adds it (aten's addmm does so for linear's bias), with no copy into w first.
 * As aten, not for a product of one column or of K 1. */
bool bias_row(const sg_tensor *self, const sg_tensor *w, sg_scalar beta, int64_t k) {
    return self && w->ndim == 2 && self->ndim == 2 && self->dtype == w->dtype && k > 1 &&
           w->sizes[1] > 1 &&
           (self->sizes[0] == 1 || self->strides[0] == 0) &&
           (self->sizes[1] == 1 || self->strides[1] == 1) &&
           sg_scalar_to_double(beta) == 1.0 && beta.kind != SG_SCALAR_COMPLEX &&
           (w->dtype == SG_FLOAT16 || w->dtype == SG_BFLOAT16 || w->dtype == SG_FLOAT32) &&
           ((uintptr_t)sg_tensor_data(self) & 15) == 0 && !sg_may_overlap(self, w);
}

/* result ([B,] m, n) = beta * self + alpha * a . b, as the CPU's mm_compute: self is already
 * expanded to the result (NULL where beta is 0); result is staged in a contiguous tensor where
 * its layout does not suit a gemm or it overlaps a or b. cfg: a table's cuBLASLt algorithm;
 * probe: the candidates are asked for and nothing is computed; blas: through cuBLAS. */
sg_status mm_compute(const char *op, sg_tensor *result, sg_tensor *self, sg_tensor *a,
                     sg_tensor *b, sg_scalar beta, sg_scalar alpha,
                     const sg_gemm_lt_config *cfg = nullptr, lt_probe *probe = nullptr,
                     bool blas = false) {
    sg_dtype  t = dtype_of(result);
    sg_status st;
    if (!sg_mm_dtype_ok(t)) return sg_not_implemented(op, t);
    if ((st = same_device(op, result, a)) || (st = same_device(op, result, b)) ||
        (st = same_device(op, result, self)))
        return st;
    if (sg_tensor_numel(result) == 0) return SG_OK;
    if ((st = sg_mm_scalars_check(op, t, a, beta, alpha))) return st;
    sg_cu_guard guard(result->device);
    bool        beta0 = sg_mm_scalar_is_zero(beta);
    sg_tensor  *w = result, *ao = nullptr, *bo = nullptr, *ua, *ub;
    if (!sg_mm_gemm_layout_ok(result) || sg_may_overlap(result, a) ||
        sg_may_overlap(result, b)) {
        if ((st = sg_tensor_empty(result->sizes, result->ndim, t, result->device, &w))) return st;
    }
    if ((st = usable(a, &ua, &ao)) || (st = usable(b, &ub, &bo))) goto done;
    {
        int32_t  nd = ua->ndim;
        bool     batched = nd == 3;
        gemm_job g;
        g.dtype = t;
        g.batch = batched ? ua->sizes[0] : 1;
        g.m = ua->sizes[nd - 2], g.k = ua->sizes[nd - 1], g.n = ub->sizes[nd - 1];
        g.a = operand{(char *)sg_tensor_data(ua), batched ? ua->strides[0] : 0,
                      ua->strides[nd - 2], ua->strides[nd - 1]};
        g.b = operand{(char *)sg_tensor_data(ub), batched ? ub->strides[0] : 0,
                      ub->strides[nd - 2], ub->strides[nd - 1]};
        g.c = operand{(char *)sg_tensor_data(w), batched ? w->strides[0] : 0, w->strides[nd - 2],
                      w->strides[nd - 1]};
        g.alpha = alpha;
        g.beta = beta0 ? sg_scalar_int(0) : beta;
        g.beta0 = beta0;
        g.cfg = cfg;
        g.blas = blas;
        g.bias = nullptr;
        g.probe = probe;
        /* the bias epilogue, where it suits (and C is row-major: run_lt checks): else a copy
         * and beta */
        bool tried = false;
        if (!blas && !beta0 && bias_row(self, w, beta, g.k)) {
            gemm_job e = g;
            e.bias = sg_tensor_data(self), e.beta0 = true, e.beta = sg_scalar_int(0);
            if ((st = gemm_run(e, &tried))) goto done;
        }
        if (probe) {
            if (!tried) st = gemm_run(g, &tried);
            goto done;
        }
        if (!tried) {
            if (!beta0 && self && !sg_same_view(self, w) && (st = sg_cast_copy_(w, self)))
                goto done;
            if ((st = gemm_run(g))) goto done;
        }
    }
    if (w != result) st = sg_tensor_copy_(result, w);
done:
    sg_tensor_release(ao);
    sg_tensor_release(bo);
    if (w != result) sg_tensor_release(w);
    return st;
}

/* ---- the out kernels ------------------------------------------------------------------------- */

sg_status mm_out(sg_keyset ks, sg_tensor *self, sg_tensor *mat2, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_status st;
    if ((st = sg_mm_mm_prepare(self, mat2, out)) ||
        (st = mm_compute("addmm_cuda", out, nullptr, self, mat2, sg_scalar_int(0),
                         sg_scalar_int(1))))
        return st;
    *ret = sg_tensor_retain(out);
    return SG_OK;
}

sg_status addmm_out(sg_keyset ks, sg_tensor *self, sg_tensor *mat1, sg_tensor *mat2,
                    sg_scalar beta, sg_scalar alpha, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_tensor *s = nullptr;
    sg_status  st = sg_mm_addmm_prepare(self, mat1, mat2, out, &s);
    if (!st) st = mm_compute("addmm_cuda", out, s, mat1, mat2, beta, alpha);
    sg_tensor_release(s);
    if (!st) *ret = sg_tensor_retain(out);
    return st;
}

sg_status bmm_out(sg_keyset ks, sg_tensor *self, sg_tensor *mat2, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_status st;
    if ((st = sg_mm_bmm_prepare(self, mat2, out)) ||
        (st = mm_compute("bmm_cuda", out, nullptr, self, mat2, sg_scalar_int(0), sg_scalar_int(1))))
        return st;
    *ret = sg_tensor_retain(out);
    return SG_OK;
}

sg_status baddbmm_out(sg_keyset ks, sg_tensor *self, sg_tensor *batch1, sg_tensor *batch2,
                      sg_scalar beta, sg_scalar alpha, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_tensor *s = nullptr;
    sg_status  st = sg_mm_baddbmm_prepare(self, batch1, batch2, out, &s);
    if (!st) st = mm_compute("baddbmm_cuda", out, s, batch1, batch2, beta, alpha);
    sg_tensor_release(s);
    if (!st) *ret = sg_tensor_retain(out);
    return st;
}

} // namespace

namespace {

/* A new result of op (mm, addmm or bmm) by mm_compute with a table's algorithm, cuBLAS or a probe:
 * the functional op's checks, then its product. */
sg_status lt_entry(sg_cuda_gemm_op op, const sg_gemm_lt_config *cfg, lt_probe *probe,
                   sg_tensor *self, sg_tensor *a, sg_tensor *b, sg_scalar beta, sg_scalar alpha,
                   sg_tensor **ret, bool blas = false) {
    sg_meta    m;
    sg_tensor *out = nullptr, *s = nullptr;
    sg_status  st;
    const char *name = op == SG_CUDA_GEMM_BMM ? "bmm_cuda" : "addmm_cuda";
    *ret = nullptr;
    switch (op) {
    case SG_CUDA_GEMM_MM:
        st = sg_mm_meta(a, b, &m);
        if (!st) st = sg_mm_same_dtype_m1_m2(a, b);
        beta = sg_scalar_int(0), alpha = sg_scalar_int(1);
        break;
    case SG_CUDA_GEMM_ADDMM:
        st = sg_mm_addmm_checks(self, a, b, &m);
        if (!st) st = sg_mm_same_dtype_m1_m2(a, b);
        if (!st) st = sg_mm_expand_self(self, m.sizes, 2, &s);
        break;
    case SG_CUDA_GEMM_BMM:
        st = sg_mm_bmm_checks(a, b, &m);
        if (!st) st = sg_mm_bmm_dtypes(a, b);
        beta = sg_scalar_int(0), alpha = sg_scalar_int(1);
        break;
    default: return sg_error(SG_EINVAL, "sg_cuda_gemm_lt: op %d is not mm, addmm or bmm", (int)op);
    }
    if (!st) st = sg_meta_empty(&m, &out);
    if (!st) st = mm_compute(name, out, s, a, b, beta, alpha, cfg, probe, blas);
    sg_tensor_release(s);
    if (st) {
        sg_tensor_release(out);
        return st;
    }
    *ret = out;
    return SG_OK;
}

} // namespace

extern "C" sg_status sg_cuda_mm_lt(const sg_gemm_lt_config *cfg, sg_keyset ks, sg_tensor *self,
                                   sg_tensor *mat2, sg_tensor **ret) {
    (void)ks;
    return lt_entry(SG_CUDA_GEMM_MM, cfg, nullptr, nullptr, self, mat2, sg_scalar_int(0),
                    sg_scalar_int(1), ret);
}

extern "C" sg_status sg_cuda_addmm_lt(const sg_gemm_lt_config *cfg, sg_keyset ks, sg_tensor *self,
                                      sg_tensor *mat1, sg_tensor *mat2, sg_scalar beta,
                                      sg_scalar alpha, sg_tensor **ret) {
    (void)ks;
    return lt_entry(SG_CUDA_GEMM_ADDMM, cfg, nullptr, self, mat1, mat2, beta, alpha, ret);
}

extern "C" sg_status sg_cuda_bmm_lt(const sg_gemm_lt_config *cfg, sg_keyset ks, sg_tensor *self,
                                    sg_tensor *mat2, sg_tensor **ret) {
    (void)ks;
    return lt_entry(SG_CUDA_GEMM_BMM, cfg, nullptr, nullptr, self, mat2, sg_scalar_int(0),
                    sg_scalar_int(1), ret);
}

extern "C" sg_status sg_cuda_gemm(sg_cuda_gemm_op op, const sg_gemm_lt_config *cfg, bool blas,
                                  sg_tensor *self, sg_tensor *a, sg_tensor *b, sg_scalar beta,
                                  sg_scalar alpha, sg_tensor **ret) {
    return lt_entry(op, blas ? nullptr : cfg, nullptr, self, a, b, beta, alpha, ret, blas);
}

extern "C" sg_status sg_cuda_mm_cublas(sg_keyset ks, sg_tensor *self, sg_tensor *mat2,
                                       sg_tensor **ret) {
    (void)ks;
    return lt_entry(SG_CUDA_GEMM_MM, nullptr, nullptr, nullptr, self, mat2, sg_scalar_int(0),
                    sg_scalar_int(1), ret, true);
}

extern "C" sg_status sg_cuda_addmm_cublas(sg_keyset ks, sg_tensor *self, sg_tensor *mat1,
                                          sg_tensor *mat2, sg_scalar beta, sg_scalar alpha,
                                          sg_tensor **ret) {
    (void)ks;
    return lt_entry(SG_CUDA_GEMM_ADDMM, nullptr, nullptr, self, mat1, mat2, beta, alpha, ret,
                    true);
}

extern "C" sg_status sg_cuda_bmm_cublas(sg_keyset ks, sg_tensor *self, sg_tensor *mat2,
                                        sg_tensor **ret) {
    (void)ks;
    return lt_entry(SG_CUDA_GEMM_BMM, nullptr, nullptr, nullptr, self, mat2, sg_scalar_int(0),
                    sg_scalar_int(1), ret, true);
}

extern "C" sg_status sg_cuda_gemm_lt_candidates(sg_cuda_gemm_op op, sg_tensor *self, sg_tensor *a,
                                                sg_tensor *b, sg_scalar beta, sg_scalar alpha,
                                                int32_t cap, sg_gemm_lt_config *cfg,
                                                int32_t *got) {
    if (!got || (cap > 0 && !cfg))
        return sg_error(SG_EINVAL, "sg_cuda_gemm_lt_candidates: NULL cfg or got");
    *got = 0;
    lt_probe   probe = {cap > 0 ? cap : 0, 0, cfg};
    sg_tensor *r = nullptr;
    sg_status  st = lt_entry(op, nullptr, &probe, self, a, b, beta, alpha, &r);
    sg_tensor_release(r);
    if (!st) *got = probe.got;
    return st;
}

extern "C" sg_status sg_cu_register_attention(void); /* attention.cu */

extern "C" sg_status sg_cu_register_linalg(void) {
    /* the meta functions are the CPU library's (set once by sg_aten_cpu_init) */
    SG_CU_REG(aten_mm_out, mm_out);
    SG_CU_REG(aten_addmm_out, addmm_out);
    SG_CU_REG(aten_bmm_out, bmm_out);
    SG_CU_REG(aten_baddbmm_out, baddbmm_out);
    return sg_cu_register_attention();
}
