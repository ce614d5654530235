/* gemm_table.c: finding a matrix product's shape class in a decision table (sg_gemm_table.h). */
#include "sg_gemm_table.h"

/* 0 rows contiguous, 1 columns contiguous, -1 neither. A size-1 dim's stride says nothing, so
 * it does not decide: a 1 x k row is row-major whatever its row stride. */
static int matrix_layout(const sg_tensor *t) {
    if (!t || t->ndim < 2) return -1;
    int64_t r = t->sizes[t->ndim - 2], c = t->sizes[t->ndim - 1];
    int64_t rs = t->strides[t->ndim - 2], cs = t->strides[t->ndim - 1];
    if ((c == 1 || cs == 1) && (r == 1 || rs >= (c > 1 ? c : 1))) return 0;
    if ((r == 1 || rs == 1) && (c == 1 || cs >= (r > 1 ? r : 1))) return 1;
    return -1;
}

int32_t sg_gemm_layout_of(const sg_tensor *a, const sg_tensor *b) {
    int la = matrix_layout(a), lb = matrix_layout(b);
    return la < 0 || lb < 0 ? -1 : (int32_t)(2 * la + lb);
}

/* The order of the generator's sort, to (dtype, layout, n, k): a class's group. */
static int group_cmp(const sg_gemm_rule *r, int32_t dt, int32_t lay, int64_t n, int64_t k) {
    if (r->dtype != dt) return r->dtype < dt ? -1 : 1;
    if (r->layout != lay) return r->layout < lay ? -1 : 1;
    if (r->n != n) return r->n < n ? -1 : 1;
    if (r->k != k) return r->k < k ? -1 : 1;
    return 0;
}

const sg_gemm_rule *sg_gemm_rule_find(const sg_gemm_rule *rules, size_t nrules,
                                      const sg_tensor *a, const sg_tensor *b, int64_t batch,
                                      int64_t m, int64_t n, int64_t k) {
    if (!a || !b || a->dtype != b->dtype) return NULL;
    int32_t lay = sg_gemm_layout_of(a, b), dt = (int32_t)a->dtype;
    if (lay < 0) return NULL;
    /* the first rule of the group, then its classes (a few: the tuner's M and batch buckets) */
    size_t lo = 0, hi = nrules;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (group_cmp(&rules[mid], dt, lay, n, k) < 0) lo = mid + 1;
        else hi = mid;
    }
    for (; lo < nrules && group_cmp(&rules[lo], dt, lay, n, k) == 0; lo++) {
        const sg_gemm_rule *r = &rules[lo];
        if (batch >= r->batch_lo && batch <= r->batch_hi && m >= r->m_lo && m <= r->m_hi)
            return r;
    }
    return NULL;
}
