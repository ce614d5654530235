/* libFuzzer target: any bytes as a schema file through load, group and validate, then the
 * JSON where nothing was said: whatever the input, no crash, no leak, no undefined behaviour. */
#include "emit.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    sg_model m;
    sg_diag  d;
    if (sg_model_init(&m) != 0) return 0;
    sg_diag_init(&d);
    if (sg_load_buffer(&m, "fuzz.yaml", (const char *)data, size, &d) == 0 &&
        sg_model_group(&m, &d) == 0)
        sg_validate(&m, &d);
    sg_buf json;
    sg_buf_init(&json);
    if (!d.nerrors) sg_emit_json(&json, &m);
    sg_buf_free(&json);
    sg_diag_free(&d);
    sg_model_free(&m);
    return 0;
}
