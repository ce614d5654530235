/* libFuzzer target: any bytes as a DSL declaration file (docs/dsl.md) against the shipped aten
 * schemas and the fused ops' (loaded once), through loading, the tables' links, the plan and
 * the generated C where nothing was said: whatever the input, no crash, no leak, no undefined
 * behaviour. Files a declaration names (kernel sources, `when_c` files) are found beside
 * kernels/dsl/, so run it from the repository's root (SG_SOURCE_DIR is the fallback). */
#include "derive.h"
#include "dsl.h"
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static sg_model model;
static bool     ready;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    if (access("kernels/dsl", R_OK) != 0 && chdir(SG_SOURCE_DIR) != 0) {
        fprintf(stderr, "fuzz_dsl: cannot find kernels/dsl here or in %s\n", SG_SOURCE_DIR);
        exit(1);
    }
    sg_diag d;
    sg_diag_init(&d);
    if (sg_model_init(&model) != 0) exit(1);
    sg_load_file(&model, "schemas/aten_core.yaml", &d);
    sg_load_file(&model, "kernels/dsl/schemas/fused.yaml", &d);
    if (!d.nerrors) sg_model_group(&model, &d);
    if (!d.nerrors) sg_validate(&model, &d);
    if (!d.nerrors) sg_model_derive(&model, &d);
    if (d.nerrors) {
        fprintf(stderr, "fuzz_dsl: the schemas did not load:\n%.*s", (int)d.out.len,
                d.out.data ? d.out.data : "");
        exit(1);
    }
    sg_diag_free(&d);
    ready = true;
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    if (!ready) return 0;
    sg_dsl_set s;
    sg_diag    d;
    if (sg_dsl_init(&s) != 0) return 0;
    sg_diag_init(&d);
    sg_dsl_load_buffer(&s, &model, "kernels/dsl/fuzz.yaml", (const char *)data, size, &d);
    if (!d.nerrors) sg_dsl_link_tables(&s, &d);
    if (!d.nerrors) {
        static const char *const inputs[] = {"schemas/aten_core.yaml",
                                             "kernels/dsl/schemas/fused.yaml"};
        sg_buf plan, c, h;
        sg_buf_init(&plan), sg_buf_init(&c), sg_buf_init(&h);
        sg_dsl_plan(&plan, &s);
        sg_dsl_emit_c(&c, &h, &s, "fuzz", inputs, 2);
        sg_buf_free(&plan), sg_buf_free(&c), sg_buf_free(&h);
    }
    sg_diag_free(&d);
    sg_dsl_free(&s);
    return 0;
}
