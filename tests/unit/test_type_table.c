/* test_type_table.c: the type-family table (gen/schema/sg_type_table.h): which family each
 * schema type gets, the table's own invariants, and docs/types.md, whose table of families
 * must say what the table says, row for row. */
#include "check.h"
#include "lua_model.h"
#include "sg_schema.h"
#include "sg_type_table.h"

/* The family name of the first argument of "f(<type> x) -> ()". */
static const char *family_of(sg_arena *arena, const char *type) {
    char text[128];
    snprintf(text, sizeof text, "f(%s x) -> ()", type);
    sg_schema       s;
    sg_schema_error err;
    if (sg_schema_parse(text, strlen(text), arena, &s, &err) != SG_SCHEMA_OK || s.nargs != 1) {
        fprintf(stderr, "cannot parse %s: %s\n", text, err.msg);
        return "(unparsed)";
    }
    return sg_type_family(s.args[0].type);
}

static void test_families(void) {
    sg_arena *arena = sg_arena_new(NULL, NULL);
    static const char *const cases[][2] = {
        {"Tensor", "tensor"},           {"Tensor(a!)", "tensor"},
        {"Tensor?", "opt_tensor"},      {"Tensor[]", "tensor_list"},
        {"Tensor?[]", "opt_tensor_list"}, {"Tensor[]?", "opt_tensor_list_opt"},
        {"Tensor?[]?", "opt_tensor_list_opt"}, {"Tensor(a!)[]", "tensor_list"},
        {"int", "int"},                 {"SymInt", "int"},
        {"DeviceIndex", "int"},         {"QScheme", "int"},
        {"int?", "opt_int"},            {"SymInt?", "opt_int"},
        {"float", "float"},             {"SymFloat", "float"},
        {"float?", "opt_float"},        {"bool", "bool"},
        {"SymBool", "bool"},            {"bool?", "opt_bool"},
        {"complex", "complex"},         {"complex?", "opt_complex"},
        {"str", "str"},                 {"Dimname", "str"},
        {"str?", "opt_str"},            {"Scalar", "scalar"},
        {"Scalar?", "opt_scalar"},      {"ScalarType", "dtype"},
        {"ScalarType?", "opt_dtype"},   {"Layout", "layout"},
        {"Layout?", "opt_layout"},      {"MemoryFormat", "memory_format"},
        {"MemoryFormat?", "opt_memory_format"}, {"Device", "device"},
        {"Device?", "opt_device"},      {"Generator", "generator"},
        {"Generator?", "generator"},    {"Storage", "opaque"},
        {"Stream?", "opaque"},          {"int[]", "int_list"},
        {"int[2]", "int_list"},         {"SymInt[]", "int_list"},
        {"int[1]?", "opt_int_list"},    {"SymInt[]?", "opt_int_list"},
        {"float[]", "float_list"},      {"float[]?", "opt_float_list"},
        {"bool[3]", "bool_list"},       {"bool[]?", "opt_bool_list"},
        {"Scalar[]", "scalar_list"},    {"Scalar[]?", "opt_scalar_list"},
        {"str[]", "str_list"},          {"Dimname[]", "str_list"},
        {"Dimname[]?", "opt_str_list"},
        /* what no row spells */
        {"int?[]", "any"},              {"SymFloat[]", "any"},
        {"Tensor[][]", "any"},          {"Any", "any"},
        {"t", "any"},                   {"(int, int)", "any"},
        {"Dict(str, Tensor)", "any"},   {"DeviceIndex[]", "any"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = family_of(arena, cases[i][0]);
        if (strcmp(got, cases[i][1]) != 0)
            fprintf(stderr, "the family of %s: got %s, expected %s\n", cases[i][0], got, cases[i][1]);
        CHECK_STR(got, cases[i][1]);
    }
    sg_arena_free(arena);
}

/* Invariants: names unique; an argument letter names one way of boxing (two families share
 * one only where their C parameter and tags are the same); a family with a typed result has a
 * result letter of its own. */
static void test_invariants(void) {
    for (int i = 0; i < SG_FAM__COUNT; i++) {
        const sg_type_family_row *a = &sg_type_family_rows[i];
        CHECK(a->name && a->param && a->result && a->tags);
        CHECK((a->ret_letter == 'a') == (strcmp(a->result, "sg_any") == 0));
        CHECK(sg_type_family_of_letter(a->letter, false) >= 0);
        for (int j = i + 1; j < SG_FAM__COUNT; j++) {
            const sg_type_family_row *b = &sg_type_family_rows[j];
            CHECK(strcmp(a->name, b->name) != 0);
            if (a->letter == b->letter) {
                if (strcmp(a->param, b->param) != 0)
                    fprintf(stderr, "%s and %s share the letter %c\n", a->name, b->name, a->letter);
                CHECK(strcmp(a->param, b->param) == 0);
            }
            if (a->ret_letter == b->ret_letter && a->ret_letter != 'a')
                CHECK(strcmp(a->result, b->result) == 0);
        }
    }
    CHECK(sg_type_family_of_letter('t', false) == SG_FAM_TENSOR);
    CHECK(sg_type_family_of_letter('S', true) == SG_FAM_SCALAR);
    CHECK(sg_type_family_of_letter('?', false) < 0);
}

/* ---- docs/types.md ----------------------------------------------------------------------- */

/* A family's spellings as docs/types.md writes them: "`int`, `SymInt`". */
static void spellings_text(int fam, char *out, size_t cap) {
    static const char *const suffix[SG_SHAPE__COUNT] = {"", "?", "[]", "?[]", "[]?", "?[]?"};
    size_t n = 0;
    out[0] = '\0';
#define SG_TAG(x)
#define SG_SPELL(kind, shape)                                                                  \
    n += (size_t)snprintf(out + n, cap - n, "%s`%s%s`", n ? ", " : "",                        \
                          sg_type_infos[SG_TY_##kind].name, suffix[SG_SHAPE_##shape]);
#define SG_FAM_SPELLINGS(id, name, letter, ret_letter, param, result, tags, spellings) \
    if (fam == SG_FAM_##id) { spellings }
    SG_TYPE_FAMILIES(SG_FAM_SPELLINGS)
#undef SG_FAM_SPELLINGS
#undef SG_SPELL
#undef SG_TAG
    if (!n) snprintf(out, cap, "anything else");
}

/* The row docs/types.md must have for a family. */
static void doc_row(int fam, char *out, size_t cap) {
    const sg_type_family_row *r = &sg_type_family_rows[fam];
    char sp[512], tags[256];
    spellings_text(fam, sp, sizeof sp);
    size_t n = 0;
    tags[0] = '\0';
    for (int k = 0; r->tags[k]; k++)
        n += (size_t)snprintf(tags + n, sizeof tags - n, "%s`%s`", k ? ", " : "", r->tags[k]);
    if (!n) snprintf(tags, sizeof tags, "any");
    snprintf(out, cap, "| %s | `%s` | `%c` | `%c` | `%s` | `%s` | %s |", sp, r->name, r->letter,
             r->ret_letter, r->param, r->result, tags);
}

static void test_docs(void) {
    const char *path = SG_TESTS_DIR "/../docs/types.md";
    FILE       *f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f) return;
    char  line[1024];
    int   seen[SG_FAM__COUNT] = {0};
    bool  in_table = false;
    int   rows = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "| schema types | family |", 25) == 0) {
            in_table = true;
            continue;
        }
        if (!in_table || strncmp(line, "|---", 4) == 0) continue;
        if (line[0] != '|') {
            if (rows) break; /* the table ended */
            continue;
        }
        rows++;
        /* the family is the second cell: "| ... | `name` | ..." */
        char *cell = strstr(line, " | `");
        char  name[64] = "";
        if (cell) sscanf(cell + 4, "%63[a-z_]", name);
        int fam = -1;
        for (int i = 0; i < SG_FAM__COUNT; i++)
            if (strcmp(sg_type_family_rows[i].name, name) == 0) fam = i;
        if (fam < 0) {
            fprintf(stderr, "docs/types.md: a row for no family of the table: %s\n", line);
            CHECK(fam >= 0);
            continue;
        }
        seen[fam]++;
        char want[1024];
        doc_row(fam, want, sizeof want);
        if (strcmp(line, want) != 0)
            fprintf(stderr, "docs/types.md disagrees with sg_type_table.h:\n  doc:   %s\n  table: %s\n",
                    line, want);
        CHECK(strcmp(line, want) == 0);
    }
    fclose(f);
    CHECK(rows > 0);
    for (int i = 0; i < SG_FAM__COUNT; i++) {
        if (seen[i] != 1) {
            char want[1024];
            doc_row(i, want, sizeof want);
            fprintf(stderr, "docs/types.md has %d rows for %s; it needs one:\n%s\n", seen[i],
                    sg_type_family_rows[i].name, want);
        }
        CHECK(seen[i] == 1);
    }
}

int main(void) {
    test_families();
    test_invariants();
    test_docs();
    return check_result("test_type_table");
}
