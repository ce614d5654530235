/* wrappers.c: what generated typed wrappers stand on where things are not as they should be:
 * the stand-in op their handles hold before their library's init (and after shutdown), and
 * the messages for a NULL tensor argument and a malformed tensor list.
 *
 * Rationale: a handle that always points at an op with a table lets the wrappers' fast path
 * stay as it is (no test for an undefined op); the stand-in's table sends every key set to one
 * entry whose boxed kernel reports the missing init. */
#include "rt_dispatch.h"

#include <stdlib.h>

sg_status sg__uninit_error(const char *fn) {
    return sg_error(SG_ESTATE, "%s%san op of a generated library was used before the library's "
                               "init defined it (call <lib>_init(), or the kernels' init such as "
                               "sg_aten_cpu_init(), first; after sg_runtime_shutdown, call it "
                               "again)",
                    fn ? fn : "", fn ? ": " : "");
}

static sg_status uninit_kernel(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                               int32_t nrets, void *ctx) {
    (void)ctx, (void)op, (void)ks, (void)args, (void)rets, (void)nrets;
    return sg__uninit_error(NULL);
}

static sg_table uninit_table = {
    .mask = 1,
    .entry = {[0] = {.boxed = uninit_kernel, .kind = SG_ENTRY_MISSING}},
};

sg_op sg_op_uninit = {
    .head = {&uninit_table},
    .name = (char *)"(undefined op)",
    .overload = (char *)"",
    .text = (char *)"(undefined op)",
    /* counts no call passes, so a boxed call fails its first check (see call.c) */
    .nargs = INT32_MIN,
    .nrets = INT32_MAX,
    .device_arg = -1,
};

sg_status sg_op_null_arg(const sg_op *op, int32_t arg) {
    if (!op || op == &sg_op_uninit) return uninit_kernel(op, 0, NULL, NULL, 0, NULL);
    const char *name = arg >= 0 && arg < op->nargs ? op->schema.args[arg].name : NULL;
    return sg_error(SG_EINVAL, "%s%s%s: argument %d '%s' is a NULL tensor", op->name,
                    *op->overload ? "." : "", op->overload, (int)arg, name ? name : "?");
}

sg_status sg_op_bad_list(const sg_op *op, int32_t arg, sg_tensor_list l, bool optional_items) {
    if (!op || op == &sg_op_uninit) return uninit_kernel(op, 0, NULL, NULL, 0, NULL);
    const char *name = arg >= 0 && arg < op->nargs ? op->schema.args[arg].name : NULL;
    const char *why = l.len < 0                ? "a list of negative length"
                      : l.len > 0 && !l.items ? "a NULL item pointer with a nonzero length"
                      : optional_items        ? "a malformed value"
                                              : "a NULL tensor in a Tensor[] (a Tensor?[] takes "
                                                "None items)";
    return sg_error(SG_EINVAL, "%s%s%s: argument %d '%s' holds %s", op->name,
                    *op->overload ? "." : "", op->overload, (int)arg, name ? name : "?", why);
}

/* ---- the libraries' handles, put back to the stand-in at shutdown ------------------------ */

typedef struct slots {
    struct slots     *next;
    const sg_op_desc *table;
    size_t            n;
} slots;

static slots *all_slots; /* under sg__lock */

sg_status sg__op_slots_add(const sg_op_desc *table, size_t n) {
    pthread_mutex_lock(&sg__lock);
    slots *s = all_slots;
    while (s && s->table != table) s = s->next;
    if (!s && (s = malloc(sizeof *s))) {
        *s = (slots){all_slots, table, n};
        all_slots = s;
    }
    pthread_mutex_unlock(&sg__lock);
    return s ? SG_OK : sg_error(SG_ENOMEM, "out of memory");
}

void sg__op_slots_reset(void) {
    for (slots *s = all_slots, *next; s; s = next) {
        next = s->next;
        for (size_t i = 0; i < s->n; i++)
            if (s->table[i].op) *s->table[i].op = &sg_op_uninit;
        free(s);
    }
    all_slots = NULL;
}
