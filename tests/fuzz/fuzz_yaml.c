/* libFuzzer target: any bytes as a schema file through load, group and validate. */
#include "model.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    sg_model m;
    sg_diag d;
    if (sg_model_init(&m) != 0) return 0;
    sg_diag_init(&d);
    if (sg_load_buffer(&m, "fuzz.yaml", (const char *)data, size, &d) == 0 &&
        sg_model_group(&m, &d) == 0)
        sg_validate(&m, &d);
    sg_diag_free(&d);
    sg_model_free(&m);
    return 0;
}
