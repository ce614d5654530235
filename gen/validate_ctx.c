/* validate_ctx.c: the rules' shared helpers (validate_ctx.h). */
#include "validate_ctx.h"

#include <string.h>

const sg_op *sgv_find(const sgv_ctx *cx, const char *ns, const char *name) {
    char key[512];
    size_t n = sgv_name_key(key, sizeof key, ns, name);
    return sg_strmap_get(&cx->names, key, n);
}

bool sgv_name_exists(const sgv_ctx *cx, const char *ns, const char *name) {
    char key[512];
    size_t n = sgv_name_key(key, sizeof key, ns, name);
    return sg_strmap_get(&cx->bases, key, n) != NULL;
}

static bool ident_ok(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!alpha && !(i && c >= '0' && c <= '9')) return false;
    }
    return n > 0;
}

static bool ends_with_n(const char *s, size_t n, const char *suffix) {
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

bool sgv_check_op_name(sgv_ctx *cx, const char *name, size_t n, sg_pos pos, const char *what) {
    int w = (int)(n > 80 ? 80 : n);
    if (!ident_ok(name, n)) {
        SGV_ERROR(cx, pos, "%s '%.*s' is not an operator name [SG-104]", what, w, name);
        return false;
    }
    sg_name_info info = sg_name_classify(name, n);
    bool dunder = info.dunder, inplace = !dunder && info.inplace;
    const char *why = NULL;
    if (ends_with_n(name, n, "_out"))
        why = "ends in '_out', which torchgen reserves: make 'out' an overload ('name.out')";
    else if (dunder && name[2] == 'i' && !info.augmented)
        why = "is a dunder name starting with 'i', which torchgen allows only for augmented "
              "assignment (__iadd__, __iand__, ...)";
    else if (inplace && ends_with_n(name, n - 1, "_functional"))
        why = "is in-place, but '_functional' names the functional twin of a mutable operator";
    if (why) SGV_ERROR(cx, pos, "%s '%.*s' %s [SG-104]", what, w, name, why);
    return why == NULL;
}
