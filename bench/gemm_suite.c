/* gemm_suite.c: the matrix-product shape suite (bench/gemm_suite.txt, bench/gemm_suite_bmm.txt), read for the benchmark,
 * the tuner and the GPU test of the decision table (gemm_suite.h). No CUDA here. */
#include "gemm_suite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sg_gemm_read_suite(const char *path, sg_gemm_shape *out, int cap) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "gemm: cannot open %s\n", path);
        return -1;
    }
    int64_t ms[64];
    int     nm = 0, n = 0, line = 0;
    char    buf[1024];
    while (fgets(buf, sizeof buf, f)) {
        line++;
        char *p = buf, *end;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || *p == 0) continue;
        int64_t v[64];
        int     nv = 0;
        char    word[8] = {0};
        int     used = 0;
        if (sscanf(p, "%7s%n", word, &used) != 1) goto bad;
        p += used;
        for (;;) {
            long long x = strtoll(p, &end, 10);
            if (end == p) break;
            if (x <= 0 || nv == 64) goto bad;
            v[nv++] = x;
            p = end;
        }
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
        if (*p) goto bad;
        if (!strcmp(word, "m") && nv > 0) {
            memcpy(ms, v, sizeof v[0] * (size_t)nv);
            nm = nv;
        } else if (!strcmp(word, "nk") && nv == 2 && nm > 0) {
            for (int i = 0; i < nm && n < cap; i++) out[n++] = (sg_gemm_shape){ms[i], v[0], v[1], 1};
        } else if (!strcmp(word, "mnk") && nv == 3 && n < cap) {
            out[n++] = (sg_gemm_shape){v[0], v[1], v[2], 1};
        } else if (!strcmp(word, "bmnk") && nv == 4 && n < cap) {
            out[n++] = (sg_gemm_shape){v[1], v[2], v[3], v[0]};
        } else {
            goto bad;
        }
        continue;
    bad:
        fprintf(stderr, "gemm: %s:%d: expected 'm M...', 'nk N K' (after an m line), "
                        "'mnk M N K' or 'bmnk BATCH M N K' with positive numbers\n", path, line);
        fclose(f);
        return -1;
    }
    fclose(f);
    return n;
}
