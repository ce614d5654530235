/* dsl_emit.c: LIB_dsl.c and LIB_dsl.h (docs/dsl.md, "What schemagen generates"). */
#include "dsl.h"

void sg_dsl_emit_c(sg_buf *c, sg_buf *h, const sg_dsl_set *s, const char *lib,
                   const char *const *inputs, uint32_t ninputs) {
    (void)c, (void)h, (void)s, (void)lib, (void)inputs, (void)ninputs;
}
