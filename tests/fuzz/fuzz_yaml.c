/* libFuzzer target: any bytes as a schema file through load, group and validate; then the
 * same bytes with every byte through libyaml's reader (the loader skips it for plain text:
 * yaml_load.c), which must give the same diagnostics and the same model (its JSON). */
#include "emit.h"
#include "model.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* What a run says, then the model as JSON where it said no error; false where out of memory. */
static bool run(const unsigned char *data, size_t size, bool reader, sg_buf *out) {
    sg_model m;
    sg_diag  d;
    if (sg_model_init(&m) != 0) return false;
    m.libyaml_reader = reader;
    sg_diag_init(&d);
    if (sg_load_buffer(&m, "fuzz.yaml", (const char *)data, size, &d) == 0 &&
        sg_model_group(&m, &d) == 0)
        sg_validate(&m, &d);
    sg_buf_putn(out, d.out.data ? d.out.data : "", d.out.len);
    if (!d.nerrors) sg_emit_json(out, &m);
    sg_diag_free(&d);
    sg_model_free(&m);
    return !out->oom;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    sg_buf a, b;
    sg_buf_init(&a);
    sg_buf_init(&b);
    if (run(data, size, false, &a) && run(data, size, true, &b) &&
        (a.len != b.len || memcmp(a.data ? a.data : "", b.data ? b.data : "", a.len) != 0))
        abort();
    sg_buf_free(&a);
    sg_buf_free(&b);
    return 0;
}
