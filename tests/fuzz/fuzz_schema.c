/* libFuzzer target: any bytes into the schema parser. A parse that succeeds must print back to
 * a string that parses to an equal model. Build with -DSG_FUZZ=ON (clang); see docs/testing.md. */
#include "sg_schema.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    sg_arena *a = sg_arena_new(NULL, NULL);
    sg_schema s, again;
    sg_schema_error err;
    if (sg_schema_parse((const char *)data, size, a, &s, &err) == SG_SCHEMA_OK) {
        sg_buf b;
        sg_buf_init(&b);
        sg_schema_print(&b, &s, true);
        if (sg_schema_parse(b.data, b.len, a, &again, &err) != SG_SCHEMA_OK ||
            !sg_schema_equal(&s, &again))
            abort();
        sg_buf_free(&b);
        (void)sg_schema_kind_of(&s);
    }
    sg_arena_free(a);
    return 0;
}
