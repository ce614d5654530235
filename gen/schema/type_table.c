/* type_table.c: the type-family table (sg_type_table.h) as data, and the lookups that
 * expand it. */
#include "sg_type_table.h"

#define SG_TAG(x) "SG_ANY_" #x,
#define SG_FAM_TAGS(id, name, letter, ret_letter, param, result, tags, spellings) \
    static const char *const tags_##id[] = {tags NULL};
SG_TYPE_FAMILIES(SG_FAM_TAGS)
#undef SG_FAM_TAGS
#undef SG_TAG

#define SG_FAM_ROW(id, name, letter, ret_letter, param, result, tags, spellings) \
    [SG_FAM_##id] = {name, letter, ret_letter, param, result, tags_##id},
const sg_type_family_row sg_type_family_rows[SG_FAM__COUNT] = {SG_TYPE_FAMILIES(SG_FAM_ROW)};
#undef SG_FAM_ROW

bool sg_type_shape_of(const sg_type *t, sg_type_shape *shape, sg_type_kind *base) {
    bool opt = t->kind == SG_TY_OPTIONAL;
    const sg_type *u = opt ? t->elems[0] : t;
    if (u->kind != SG_TY_LIST) {
        *shape = opt ? SG_SHAPE_OPT : SG_SHAPE_PLAIN;
        *base = u->kind;
        return u->kind != SG_TY_OPTIONAL;
    }
    const sg_type *e = u->elems[0];
    bool eopt = e->kind == SG_TY_OPTIONAL;
    const sg_type *b = eopt ? e->elems[0] : e;
    *shape = opt ? (eopt ? SG_SHAPE_OPT_LIST_OPT : SG_SHAPE_OPT_LIST)
                 : (eopt ? SG_SHAPE_LIST_OPT : SG_SHAPE_LIST);
    *base = b->kind;
    return b->kind != SG_TY_OPTIONAL && b->kind != SG_TY_LIST;
}

/* One case label per spelling: the compiler refuses two rows that spell the same type. */
#define SG_SPELLING_KEY(kind, shape) ((unsigned)(kind) * SG_SHAPE__COUNT + (unsigned)(shape))

sg_type_family_id sg_type_family_of(const sg_type *t) {
    sg_type_shape shape;
    sg_type_kind  base;
    if (!sg_type_shape_of(t, &shape, &base)) return SG_FAM_ANY;
    switch (SG_SPELLING_KEY(base, shape)) {
#define SG_SPELL(kind, shape) case SG_SPELLING_KEY(SG_TY_##kind, SG_SHAPE_##shape):
#define SG_FAM_CASES(id, name, letter, ret_letter, param, result, tags, spellings) \
    spellings return SG_FAM_##id;
        SG_TYPE_FAMILIES(SG_FAM_CASES)
#undef SG_FAM_CASES
#undef SG_SPELL
    default: return SG_FAM_ANY;
    }
}

int sg_type_family_of_letter(char c, bool ret) {
    for (int i = 0; i < SG_FAM__COUNT; i++) {
        const sg_type_family_row *r = &sg_type_family_rows[i];
        if ((ret ? r->ret_letter : r->letter) == c) return i;
    }
    return -1;
}
