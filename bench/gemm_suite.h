/* gemm_suite.h: the matrix-product shape suite (bench/gemm_suite.txt). */
#ifndef SG_GEMM_SUITE_H
#define SG_GEMM_SUITE_H

#include <stdint.h>

typedef struct sg_gemm_shape {
    int64_t m, n, k;
    int64_t batch; /* 1 but for bmnk lines (bmm's) */
} sg_gemm_shape;

/* Reads the suite file's m/nk/mnk/bmnk lines into out (at most cap); the count, or -1 with the
 * file or the line said on stderr. */
int sg_gemm_read_suite(const char *path, sg_gemm_shape *out, int cap);

#endif
