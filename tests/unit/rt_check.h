/* rt_check.h: what the runtime's unit tests share on top of check.h. */
#ifndef SG_RT_CHECK_H
#define SG_RT_CHECK_H

#include "check.h"
#include "sg_runtime.h"

/* The op of schema, defined with the runtime; a failed check, with the runtime's message,
 * where it cannot be. */
static inline sg_op *define(const char *schema) {
    sg_op    *op = NULL;
    sg_status st = sg_op_define(schema, &op);
    if (st) fprintf(stderr, "define %s: %s\n", schema, sg_last_error());
    CHECK(st == SG_OK && op);
    return op;
}

#endif
