/* sg_lt_config.h: sg_gemm_lt_config (runtime/sg_gemm_table.h) and cuBLASLt's algorithm, both
 * ways: read from an algorithm a heuristic or a tuner found, and set into one to be checked and
 * run. One table of the configuration attributes serves both (the tuner and the kernels). */
#ifndef SG_LT_CONFIG_H
#define SG_LT_CONFIG_H

#include "sg_gemm_table.h"

#include <cublasLt.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct sg_lt_attr {
    cublasLtMatmulAlgoConfigAttributes_t attr;
    size_t                               size;   /* of cuBLASLt's value: 2 or 4 bytes */
    size_t                               offset; /* of the field in sg_gemm_lt_config */
} sg_lt_attr;

/* The algorithm's id first: cublasLtMatmulAlgoInit takes it, the rest are set after. */
static const sg_lt_attr sg_lt_attrs[9] = {
    {CUBLASLT_ALGO_CONFIG_ID, 4, offsetof(sg_gemm_lt_config, algo)},
    {CUBLASLT_ALGO_CONFIG_TILE_ID, 4, offsetof(sg_gemm_lt_config, tile)},
    {CUBLASLT_ALGO_CONFIG_STAGES_ID, 4, offsetof(sg_gemm_lt_config, stages)},
    {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, 4, offsetof(sg_gemm_lt_config, splitk)},
    {CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, 4, offsetof(sg_gemm_lt_config, reduction)},
    {CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, 4, offsetof(sg_gemm_lt_config, swizzle)},
    {CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, 4, offsetof(sg_gemm_lt_config, custom)},
    {CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, 2, offsetof(sg_gemm_lt_config, inner)},
    {CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, 2, offsetof(sg_gemm_lt_config, cluster)},
};

/* The configuration of algo into *c; false where cuBLASLt refuses to say. */
static inline bool sg_lt_config_get(const cublasLtMatmulAlgo_t *algo, sg_gemm_lt_config *c) {
    memset(c, 0, sizeof *c);
    for (int i = 0; i < 9; i++) {
        uint32_t v32 = 0;
        uint16_t v16 = 0;
        size_t   got = 0;
        void    *p = sg_lt_attrs[i].size == 2 ? (void *)&v16 : (void *)&v32;
        if (cublasLtMatmulAlgoConfigGetAttribute(algo, sg_lt_attrs[i].attr, p, sg_lt_attrs[i].size,
                                                 &got) != CUBLAS_STATUS_SUCCESS)
            return false;
        int32_t v = sg_lt_attrs[i].size == 2 ? (int32_t)v16 : (int32_t)v32;
        memcpy((char *)c + sg_lt_attrs[i].offset, &v, sizeof v);
    }
    return true;
}

/* Sets every attribute of c but the id (cublasLtMatmulAlgoInit's) into algo. */
static inline cublasStatus_t sg_lt_config_set(cublasLtMatmulAlgo_t *algo,
                                              const sg_gemm_lt_config *c) {
    for (int i = 1; i < 9; i++) {
        int32_t v;
        memcpy(&v, (const char *)c + sg_lt_attrs[i].offset, sizeof v);
        uint32_t       v32 = (uint32_t)v;
        uint16_t       v16 = (uint16_t)v;
        const void    *p = sg_lt_attrs[i].size == 2 ? (const void *)&v16 : (const void *)&v32;
        cublasStatus_t s = cublasLtMatmulAlgoConfigSetAttribute(algo, sg_lt_attrs[i].attr, p,
                                                                sg_lt_attrs[i].size);
        if (s != CUBLAS_STATUS_SUCCESS) return s;
    }
    return CUBLAS_STATUS_SUCCESS;
}

#endif
