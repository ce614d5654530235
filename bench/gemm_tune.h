/* gemm_tune.h: the tuner's measurements as records, and the decision table written from them
 * (gemm_tune_table.c). A records file is the tuner's whole output: each line one candidate's
 * time on one shape, with a header saying where and how it was measured, so tables can be
 * written again, or from several runs, without a GPU. */
#ifndef SG_GEMM_TUNE_H
#define SG_GEMM_TUNE_H

#include "aten_dsl.h"
#include "sg_aten_cuda.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The ops a table serves (sg_cuda_gemm_op); their names and table entries (operands,
 * expressions) are gemm_tune_table.c's. */
enum { TUNE_NOPS = SG_CUDA_GEMM_BMM + 1 };
extern const char *const sg_tune_op_names[TUNE_NOPS];

/* The header's keys, in the order the table's `tuned` lists them ("?" marks the optional). */
enum { TUNE_NKEYS = 7 };
extern const char *const sg_tune_keys[TUNE_NKEYS];

/* A DSL template of aten::mm the tuner measures (docs/gemm.md): the generated list of this
 * build's (aten_dsl.h), SG_TUNE_NTEMPLATES of them. Each entry runs point i on (self, mat2),
 * and gives point i's text "{VAR: value, ...}" (NULL past the last). */
typedef aten_dsl_template_aten_mm tune_template;
#define SG_TUNE_TEMPLATES aten_dsl_templates_aten_mm
#define SG_TUNE_NTEMPLATES ((int)(sizeof SG_TUNE_TEMPLATES / sizeof *SG_TUNE_TEMPLATES))

/* One line: "op layout dtype batch M N K candidate ms status", where candidate is
 * "heuristic", "cublas", "lt:A/B/..." (sg_gemm_lt_config's fields in order) or
 * "TEMPLATE:POINT" (a template's name); ms is -1 where status is not "ok". */
typedef struct tune_record {
    int32_t op, layout; /* sg_cuda_gemm_op; 0 nn, 1 nt */
    char    dtype[16];
    int64_t batch, m, n, k;
    char    cand[64];
    double  ms;
    bool    ok;
    int32_t run; /* which records file (read or written) it came from: 1, 2, ... */
} tune_record;

typedef struct tune_records {
    tune_record *r;
    int          n, cap;
    int32_t      run; /* the last file's: records added now belong to it */
    char        *header[TUNE_NKEYS]; /* values; NULL where unset */
} tune_records;

/* Appends the lines of a records file (header included: a value that differs from one read
 * before is an error, as the table would mix devices); false with the file and line said. */
bool sg_tune_read(tune_records *rs, const char *path);
bool sg_tune_add(tune_records *rs, const tune_record *r);
void sg_tune_free(tune_records *rs);

/* Writes the table (one entry per op measured) to path through a temporary file and a
 * rename: for each shape the candidate with the largest gain, the heuristic's time over its own
 * measured in the same run (the latest heuristic where that run has none), where the gain is
 * at least margin (runs differ by more than one run's candidates do), buckets of
 * M (and of the batch) with one choice merged; a template's points as SG_TUNE_TEMPLATES gives
 * them. The count of shapes and of shapes with a choice, and the geometric mean gain, into the
 * last three. */
bool sg_tune_write_table(const tune_records *rs, const char *path, double margin, int *nshapes,
                         int *nchosen, double *gain);

#endif
