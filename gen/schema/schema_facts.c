/* schema_facts.c: what a parsed schema says beyond its grammar: an argument's alias and base
 * type, whether it is written, which argument is self, and the schema's kind (torchgen's
 * SchemaKind). The parser works these out once per schema (sg_schema_derive_facts). */
#include "schema_info.h"

#include <string.h>

const sg_alias *sg_type_alias(const sg_type *t) {
    for (; t; t = t->nelems && (t->kind == SG_TY_OPTIONAL || t->kind == SG_TY_LIST) ? t->elems[0] : NULL)
        if (t->alias) return t->alias;
    return NULL;
}

const sg_type *sg_type_base(const sg_type *t) {
    while ((t->kind == SG_TY_OPTIONAL || t->kind == SG_TY_LIST) && t->nelems) t = t->elems[0];
    return t;
}

bool sg_type_is_tensor_like(const sg_type *t) { return sg_type_base(t)->kind == SG_TY_TENSOR; }

bool sg_schema_is_mutable(const sg_schema *s) {
    for (uint32_t i = 0; i < s->nargs; i++)
        if (sg_arg_is_write(&s->args[i])) return true;
    return false;
}

int32_t sg_ret_arg(const sg_schema *s, const sg_arg *r) {
    const sg_alias *ra = sg_type_alias(r->type);
    if (!ra || !ra->write || !ra->nbefore) return -1;
    for (uint32_t i = 0; i < s->nargs; i++) {
        const sg_alias *aa = sg_type_alias(s->args[i].type);
        if (sg_arg_is_write(&s->args[i]) && aa->nbefore && strcmp(aa->before[0], ra->before[0]) == 0)
            return (int32_t)i;
    }
    return -1;
}

/* Whether args[i] is self: the first positional argument named so. */
static bool is_self(const sg_schema *s, uint32_t i) {
    if (i >= s->npositional || strcmp(s->args[i].name, "self") != 0) return false;
    for (uint32_t k = 0; k < i; k++)
        if (strcmp(s->args[k].name, "self") == 0) return false;
    return true;
}

/* torchgen's SchemaKind: in-place by name; out by written keyword-only arguments (scratch when
 * one is named _scratch_*); mutable when a positional argument other than self is written. */
static sg_schema_kind kind_of(const sg_schema *s) {
    bool out = false, scratch = false, mutated = false;
    for (uint32_t i = 0; i < s->nargs; i++) {
        const sg_arg *a = &s->args[i];
        if (!sg_arg_is_write(a)) continue; /* most arguments: nothing more to ask */
        bool self = !a->kwarg_only && is_self(s, i);
        if (a->kwarg_only) {
            out = true;
            scratch |= strncmp(a->name, "_scratch_", 9) == 0;
        } else if (!self) {
            mutated = true;
        }
    }
    if (s->inplace) return SG_KIND_INPLACE;
    if (scratch) return SG_KIND_SCRATCH;
    if (out) return SG_KIND_OUT;
    if (mutated) return SG_KIND_MUTABLE;
    return SG_KIND_FUNCTIONAL;
}

void sg_schema_derive_facts(sg_schema *s) {
    for (uint32_t i = 0; i < s->nargs + s->nrets; i++) {
        sg_arg *a = i < s->nargs ? &s->args[i] : &s->rets[i - s->nargs];
        const sg_alias *al = sg_type_alias(a->type);
        /* a written annotation on another type (c10 reads int(a!)) has nothing to write
         * through: it stays in the type, and the argument is not written */
        a->write = al && al->write && sg_type_is_tensor_like(a->type);
    }
    s->self_index = -1;
    for (uint32_t i = 0; i < s->npositional && s->self_index < 0; i++)
        if (is_self(s, i)) s->self_index = (int32_t)i;
    s->kind = kind_of(s);
}
