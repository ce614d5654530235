/* Unit tests of the schema-string lexer, parser and canonical printer (gen/schema). */
#include "check.h"
#include <stdint.h>
#include "schema/sg_schema.h"

static sg_arena *arena;

static const sg_schema *parse_ok(const char *text) {
    static sg_schema s;
    sg_schema_error err;
    int rc = sg_schema_parse(text, strlen(text), arena, &s, &err);
    if (rc != SG_SCHEMA_OK) {
        fprintf(stderr, "unexpected error at %u: %s\n  in: %.100s\n", err.offset, err.msg, text);
        check_failures++;
        return NULL;
    }
    return &s;
}

/* Parses text expecting an error at `offset` whose message contains `needle`. */
static void parse_err(const char *text, unsigned offset, const char *needle) {
    sg_schema s;
    sg_schema_error err;
    int rc = sg_schema_parse(text, strlen(text), arena, &s, &err);
    check_count++;
    if (rc == SG_SCHEMA_OK || err.offset != offset || !strstr(err.msg, needle)) {
        check_failures++;
        fprintf(stderr, "error check failed for: %.100s\n  want offset %u containing '%s'\n"
                        "  got rc %d offset %u: %s\n", text, offset, needle, rc, err.offset, err.msg);
    }
}

static char *print(const sg_schema *s) {
    static char out[4096];
    sg_buf b;
    sg_buf_init(&b);
    sg_schema_print(&b, s, true);
    snprintf(out, sizeof out, "%s", b.data);
    sg_buf_free(&b);
    return out;
}

static char *type_str(const sg_type *t, bool alias) {
    static char out[256];
    sg_buf b;
    sg_buf_init(&b);
    sg_type_print(&b, t, alias);
    snprintf(out, sizeof out, "%s", b.data);
    sg_buf_free(&b);
    return out;
}

/* Canonical print, parse again, compare models and the printed text. */
static void round_trip(const char *text, const char *canonical) {
    const sg_schema *s = parse_ok(text);
    if (!s) return;
    sg_schema first = *s;
    char printed[4096];
    snprintf(printed, sizeof printed, "%s", print(&first));
    CHECK_STR(printed, canonical);
    const sg_schema *again = parse_ok(printed);
    if (!again) return;
    CHECK(sg_schema_equal(&first, again));
    CHECK_STR(print(again), printed);
}

static void test_names(void) {
    const sg_schema *s = parse_ok("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
    CHECK(s && s->ns == NULL);
    CHECK_STR(s->name, "add_");
    CHECK_STR(s->base, "add");
    CHECK_STR(s->overload, "Tensor");
    CHECK(s->inplace && !s->dunder);
    CHECK(sg_schema_kind_of(s) == SG_KIND_INPLACE);
    CHECK(s->nargs == 3 && s->npositional == 2 && s->star);
    CHECK(s->args[2].kwarg_only && !s->args[1].kwarg_only);

    s = parse_ok("__iand__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)");
    CHECK(s->dunder && s->inplace);
    CHECK_STR(s->base, "__and__");
    s = parse_ok("__and__.Scalar(Tensor self, Scalar other) -> Tensor");
    CHECK(s->dunder && !s->inplace);
    CHECK_STR(s->base, "__and__");

    s = parse_ok("my_ops::short_kernel(Tensor x) -> Tensor");
    CHECK_STR(s->ns, "my_ops");
    CHECK_STR(s->name, "short_kernel");
    CHECK_STR(s->overload, "");
    CHECK(s->name_offset == 8);

    s = parse_ok("  torchvision :: nms ( Tensor dets , Tensor scores , float iou_threshold ) -> Tensor ");
    CHECK_STR(s->ns, "torchvision");
    CHECK(s->nargs == 3);
    CHECK_STR(print(s), "torchvision::nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor");
}

static void test_types(void) {
    const sg_schema *s = parse_ok(
        "f(Tensor? a, Tensor[] b, Tensor?[] c, int[2] d, SymInt[] e, SymInt[]? f, int[1]? g, "
        "ScalarType? h, Layout l, MemoryFormat m, Device dev, Generator? gen, Dimname n, "
        "Storage st, Stream sm, str s, bool[3] bb, DeviceIndex di, QScheme q, Any x, t y, "
        "Dict(str, Tensor) z, __torch__.torch.classes.my.Thing w, Future(t) fu, (int, float) tu) -> ()");
    if (!s) return;
    static const char *const want[] = {
        "Tensor?", "Tensor[]", "Tensor?[]", "int[2]", "SymInt[]", "SymInt[]?", "int[1]?",
        "ScalarType?", "Layout", "MemoryFormat", "Device", "Generator?", "Dimname", "Storage",
        "Stream", "str", "bool[3]", "DeviceIndex", "QScheme", "Any", "t", "Dict(str, Tensor)",
        "__torch__.torch.classes.my.Thing", "Future(t)", "(int, float)"};
    CHECK(s->nargs == sizeof want / sizeof want[0]);
    for (uint32_t i = 0; i < s->nargs && i < sizeof want / sizeof want[0]; i++)
        CHECK_STR(type_str(s->args[i].type, false), want[i]);
    CHECK(s->args[0].type->kind == SG_TY_OPTIONAL && s->args[0].type->elems[0]->kind == SG_TY_TENSOR);
    CHECK(s->args[2].type->kind == SG_TY_LIST && s->args[2].type->elems[0]->kind == SG_TY_OPTIONAL);
    CHECK(s->args[3].type->size == 2 && s->args[4].type->size == -1);
    CHECK(s->args[5].type->kind == SG_TY_OPTIONAL);
    CHECK(sg_type_is_tensor_like(s->args[2].type) && !sg_type_is_tensor_like(s->args[3].type));
    CHECK(s->nrets == 0 && s->ret_parens);
}

static void test_alias(void) {
    const sg_schema *s = parse_ok(
        "f(Tensor(a) x, Tensor(b!) y, Tensor(a|b) z, Tensor(c -> *) w, Tensor(*) v, "
        "Tensor(d!)[] u, Tensor! fresh, Tensor(out!)? o, Tensor(e! -> e|f) ef) -> Tensor(a)");
    if (!s) return;
    const sg_alias *a = sg_type_alias(s->args[0].type);
    CHECK(a && a->nbefore == 1 && !a->write && !a->arrow && a->after == a->before);
    CHECK_STR(a->before[0], "a");
    a = sg_type_alias(s->args[1].type);
    CHECK(a && a->write);
    a = sg_type_alias(s->args[2].type);
    CHECK(a && a->nbefore == 2);
    CHECK_STR(a->before[1], "b");
    a = sg_type_alias(s->args[3].type);
    CHECK(a && a->arrow && a->nafter == 1);
    CHECK_STR(a->after[0], "*");
    a = sg_type_alias(s->args[4].type);
    CHECK(a && a->nbefore == 1);
    CHECK_STR(a->before[0], "*");
    CHECK(sg_arg_is_write(&s->args[5]));
    CHECK(s->args[5].type->kind == SG_TY_LIST && s->args[5].type->alias == NULL);
    CHECK_STR(type_str(s->args[5].type, true), "Tensor(d!)[]");
    a = sg_type_alias(s->args[6].type);
    CHECK(a && a->fresh && a->write && a->nbefore == 0);
    CHECK_STR(type_str(s->args[7].type, true), "Tensor(out!)?");
    a = sg_type_alias(s->args[8].type);
    CHECK(a && a->write && a->arrow && a->nafter == 2);
    CHECK(sg_schema_is_mutable(s));
    CHECK(sg_schema_kind_of(s) == SG_KIND_MUTABLE);
}

static void test_defaults(void) {
    const sg_schema *s = parse_ok(
        "f(Tensor self, int a=1, int b=-100, float c=1e-05, float d=-1.5e308, float e=2, "
        "int[2] f=1, int[] g=[-2,-1], int[] h=[], str i='linear', str j=\"\\\"'\\\\\", "
        "int k=Mean, ScalarType l=long, MemoryFormat m=contiguous_format, bool n=True, "
        "Scalar? o=None, Scalar p=1j, int[] q=[0, 1]) -> Tensor");
    if (!s) return;
    CHECK(s->args[1].default_value->kind == SG_VAL_INT && s->args[1].default_value->u.i == 1);
    CHECK(s->args[2].default_value->u.i == -100);
    CHECK_STR(s->args[2].default_text, "-100");
    CHECK(s->args[3].default_value->kind == SG_VAL_FLOAT && s->args[3].default_value->u.f == 1e-05);
    CHECK_STR(s->args[3].default_text, "1e-05");
    CHECK(s->args[4].default_value->u.f < -1e308);
    CHECK(s->args[5].default_value->kind == SG_VAL_INT);
    CHECK(s->args[6].default_value->kind == SG_VAL_INT);
    const sg_value *g = s->args[7].default_value;
    CHECK(g->kind == SG_VAL_LIST && g->u.list.n == 2 && g->u.list.items[0].u.i == -2);
    CHECK(s->args[8].default_value->u.list.n == 0);
    CHECK(s->args[9].default_value->kind == SG_VAL_STR);
    CHECK_STR(s->args[9].default_value->u.str.s, "linear");
    CHECK_STR(s->args[10].default_value->u.str.s, "\"'\\");
    CHECK_STR(s->args[10].default_text, "\"\\\"'\\\\\"");
    CHECK(s->args[11].default_value->kind == SG_VAL_IDENT);
    CHECK_STR(s->args[11].default_value->u.str.s, "Mean");
    CHECK(s->args[14].default_value->kind == SG_VAL_BOOL && s->args[14].default_value->u.b);
    CHECK(s->args[15].default_value->kind == SG_VAL_NONE);
    CHECK(s->args[16].default_value->kind == SG_VAL_COMPLEX && s->args[16].default_value->u.f == 1.0);
    CHECK_STR(s->args[17].default_text, "[0, 1]");
}

static void test_returns(void) {
    const sg_schema *s = parse_ok("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
    CHECK(s->nrets == 2);
    CHECK_STR(s->rets[0].name, "values");
    s = parse_ok("f(Tensor x) -> Tensor(a) out");
    CHECK(s->nrets == 1);
    CHECK_STR(s->rets[0].name, "out");
    s = parse_ok("f(Tensor(a -> *) self) -> Tensor(a)[]");
    CHECK(s->nrets == 1 && s->rets[0].type->kind == SG_TY_LIST);
    s = parse_ok("f(...) -> ...");
    CHECK(s->varargs && s->varret && s->nargs == 0 && s->nrets == 0);
    s = parse_ok("f(Tensor a, ...) -> (Tensor, ...)");
    CHECK(s->varargs && s->varret && s->nrets == 1);
}

static void test_kinds(void) {
    CHECK(sg_schema_kind_of(parse_ok("abs(Tensor self) -> Tensor")) == SG_KIND_FUNCTIONAL);
    CHECK(sg_schema_kind_of(parse_ok("abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")) == SG_KIND_OUT);
    CHECK(sg_schema_kind_of(parse_ok("f.out(Tensor self, *, Tensor(a!) out, Tensor(b!) _scratch_x) -> Tensor(a!)")) == SG_KIND_SCRATCH);
    CHECK(sg_schema_kind_of(parse_ok("_f(Tensor self, Tensor(a!) running) -> Tensor")) == SG_KIND_MUTABLE);
    const sg_schema *s = parse_ok("abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
    CHECK(sg_arg_is_out(s, &s->args[1]) && !sg_arg_is_out(s, &s->args[0]));
}

static void test_round_trip(void) {
    round_trip("add.out(Tensor self,Tensor other,*,Scalar alpha=1,Tensor(a!) out)->Tensor(a!)",
               "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
    round_trip("my_ops::f(Tensor! x, Tensor(a -> *) y, int[2]? z=None) -> (Tensor)",
               "my_ops::f(Tensor! x, Tensor(a -> *) y, int[2]? z=None) -> Tensor");
    round_trip("f(Tensor a, *) -> ()", "f(Tensor a, *) -> ()");
    round_trip("f(*, Tensor a) -> ()", "f(*, Tensor a) -> ()");
    round_trip("f(Any a, ...) -> ...", "f(Any a, ...) -> ...");
    round_trip("f(t[](a!) self, t(c -> *) el) -> t[](a!)", "f(t[](a!) self, t(c -> *) el) -> t[](a!)");
    round_trip("f(int x) -> ((int, int))", "f(int x) -> ((int, int))");
    round_trip("f(int x) -> (Tensor a)", "f(int x) -> Tensor a");
}

static void test_errors(void) {
    parse_err("", 0, "empty schema");
    parse_err("f(Tensor x -> Tensor", 11, "expected ',' or ')'");
    parse_err("f(Tensor x", 10, "missing ')'");
    parse_err("f((int, int)(a) x) -> ()", 12, "where PyTorch reads none");
    parse_err("f(Future(int)(a) x) -> ()", 13, "where PyTorch reads none");
    parse_err("f(bool x=3) -> ()", 9, "does not fit type 'bool'");
    parse_err("f(int x='a') -> ()", 8, "does not fit type 'int'");
    parse_err("f(int x=None) -> ()", 8, "only optional types");
    parse_err("f(int[] x=1) -> ()", 10, "list needs a list default");
    parse_err("f(ScalarType x=Mean) -> ()", 15, "unknown constant");
    parse_err("f(Tensor x, *, int y, *, int z) -> ()", 22, "only once");
    parse_err("f(Foo x) -> ()", 2, "unknown type 'Foo'");
    parse_err("f(double x) -> ()", 2, "spell a double 'float'");
    parse_err("f(Tensor x)", 11, "'->'");
    parse_err("f(Tensor x) -> Tensor junk more", 27, "end of schema");
    parse_err("a::b::c(Tensor x) -> ()", 4, "at most one namespace");
    parse_err("f(Tensor?(a) x) -> ()", 9, "goes before '?'");
    parse_err("f(Tensor(a x) -> ()", 11, "')' to close the alias");
    parse_err("f(str x='abc) -> ()", 8, "unterminated string");
    parse_err("f(str x='\\q') -> ()", 9, "unknown escape sequence in string (a backslash before 'q')");
    parse_err("f(int x=99999999999999999999) -> ()", 8, "out of range");
    parse_err("f(Tensor x, int y=1, Tensor z) -> ()", 21, "has no default but follows");
    parse_err("f(Tensor x) -> Tensor y=1", 23, "returns cannot have default");
    parse_err("f(Tensor \x01x) -> ()", 9, "byte 0x01");
    parse_err("f(..., Tensor x) -> ()", 7, "must be the last");
    parse_err("f(Tensor x, int y=1, ...) -> ()", 18, "varargs ('...') cannot have default");
    parse_err("f(Dict(str) x) -> ()", 2, "two types");
    char deep[400] = "f(";
    for (int i = 0; i < 40; i++) strcat(deep, "Future(");
    strcat(deep, "int");
    parse_err(deep, 2 + 32 * 7, "type nested more than 32 levels");
    /* a NUL inside the text is a bad character, not the end */
    sg_schema s;
    sg_schema_error err;
    CHECK(sg_schema_parse("f(Tensor x)\0 -> ()", 18, arena, &s, &err) == SG_SCHEMA_ESYNTAX);
    CHECK(err.offset == 11);
}

/* A text of about 1 MB: head, then unit repeated, then tail. */
static char *repeat(const char *head, const char *unit, const char *tail) {
    size_t nh = strlen(head), nu = strlen(unit), nt = strlen(tail), n = (1u << 20) / nu;
    char *t = malloc(nh + n * nu + nt + 1), *o = t;
    memcpy(o, head, nh), o += nh;
    for (size_t i = 0; i < n; i++) memcpy(o, unit, nu), o += nu;
    memcpy(o, tail, nt + 1);
    return t;
}

static void huge_err(const char *head, const char *unit, const char *tail, unsigned offset,
                     const char *needle) {
    char *t = repeat(head, unit, tail);
    parse_err(t, offset, needle);
    free(t);
}

/* Every nesting and every list stops at its limit with a located error, on a megabyte of each
 * pathological shape; whatever parses at the limit prints back and parses again. */
static void test_hostile_nesting(void) {
    /* Tensor is level 1; the 32nd '[]' would make 33 */
    huge_err("f(Tensor", "[]", " x) -> ()", 8 + 31 * 2, "type nested more than 32 levels deep");
    huge_err("f(int", "?[]", " x) -> ()", 5 + 15 * 3 + 1, "type nested more than 32");
    huge_err("f(Tensor x) -> Tensor", "[]", "", 21 + 31 * 2, "type nested more than 32");
    huge_err("f(", "(", "", 2 + 32, "type nested more than 32");
    huge_err("f(", "Dict(str, ", "", 2 + 31 * 10 + 5, "type nested more than 32");
    huge_err("f(", "Tuple(int, ", "", 2 + 31 * 11 + 6, "type nested more than 32");
    huge_err("f(int[] x=", "[", "", 10 + 32, "list default nested more than 32 levels deep");
    huge_err("f(Tensor(a", "|a", ") x) -> ()", 10 + 63 * 2 + 1, "more than 64 names");
    huge_err("f(Tensor(a -> a", "|a", ") x) -> ()", 15 + 63 * 2 + 1, "more than 64 names");
    huge_err("f(", "Tensor a, ", ") -> ()", 2 + 256 * 10, "more than 256 arguments");
    huge_err("f(Tensor x) -> (", "Tensor, ", ")", 16 + 256 * 8, "more than 256 arguments or returns");
    huge_err("f(int[] x=[", "1,", "1]) -> ()", 11 + 256 * 2, "more than 256 items");
    huge_err("f(", "(int, ", "", 2 + 31 * 6 + 1, "type nested more than 32");
    huge_err("f(Tensor x) -> Tensor", " ", ")", (1u << 20) + 21, "end of schema");
    /* a type nested in a constructed type counts the levels around it */
    char t[512];
    strcpy(t, "f(Future(Tensor");
    for (int i = 0; i < 31; i++) strcat(t, "[]");
    strcat(t, ") x) -> ()");
    parse_err(t, 2, "type nested more than 32");
    /* at the limit: parses, prints back, compares equal */
    strcpy(t, "f(Tensor");
    for (int i = 0; i < 31; i++) strcat(t, "[]");
    strcat(t, " x, Any y=");
    for (int i = 0; i < 32; i++) strcat(t, "[");
    for (int i = 0; i < 32; i++) strcat(t, "]");
    strcat(t, ") -> ()");
    round_trip(t, t);
    /* a megabyte that is fine parses too: a long name */
    char *big = repeat("f(Tensor ", "x", ") -> ()");
    const sg_schema *s = parse_ok(big);
    CHECK(s && strlen(s->args[0].name) == (1u << 20));
    free(big);
}

static const sg_value *default_of(const char *text) {
    const sg_schema *s = parse_ok(text);
    return s && s->nargs ? s->args[s->nargs - 1].default_value : NULL;
}

/* Numbers and strings as c10 reads them (function_schema_parser.cpp, lexer.h,
 * parse_string_literal.h). */
static void test_c10_values(void) {
    const sg_value *v = default_of("f(int x=010) -> ()");
    CHECK(v && v->kind == SG_VAL_INT && v->u.i == 10);
    round_trip("f(int x=010, int[2] y=[007,-010]) -> ()", "f(int x=010, int[2] y=[007,-010]) -> ()");
    v = default_of("f(int[2] y=[007,-010]) -> ()");
    CHECK(v && v->u.list.n == 2 && v->u.list.items[0].u.i == 7 && v->u.list.items[1].u.i == -10);
    v = default_of("f(int x=9223372036854775807) -> ()");
    CHECK(v && v->u.i == INT64_MAX);
    v = default_of("f(int x=-9223372036854775808) -> ()");
    CHECK(v && v->u.i == INT64_MIN);
    parse_err("f(int x=9223372036854775808) -> ()", 8, "out of range of a 64-bit int");
    parse_err("f(int x=-9223372036854775809) -> ()", 9, "out of range of a 64-bit int");
    parse_err("f(int[] x=[1, 18446744073709551616]) -> ()", 14, "out of range of a 64-bit int");
    parse_err("f(Scalar x=18446744073709551615) -> ()", 11, "out of range");
    parse_err("f(int x=0x10) -> ()", 8, "hexadecimal integer '0x10'");
    /* a float's default is read with stod: an integer beyond int64 is a float there, but
     * not for float? (c10 reads that one with stoll) */
    v = default_of("f(float x=99999999999999999999) -> ()");
    CHECK(v && v->kind == SG_VAL_FLOAT && v->u.f == 1e20);
    v = default_of("f(float[] x=[1, -99999999999999999999]) -> ()");
    CHECK(v && v->u.list.items[0].kind == SG_VAL_INT && v->u.list.items[1].u.f == -1e20);
    parse_err("f(float? x=99999999999999999999) -> ()", 11, "out of range of a 64-bit int");
    /* c10 reads 1E5 as a float only for a float: for a Scalar it would be the int 1 */
    v = default_of("f(float x=1E5) -> ()");
    CHECK(v && v->kind == SG_VAL_FLOAT && v->u.f == 1e5);
    parse_err("f(Scalar x=1E5) -> ()", 11, "as the integer before the 'E'");
    v = default_of("f(Scalar x=1.5E2, Scalar y=2e3) -> ()");
    CHECK(v && v->kind == SG_VAL_FLOAT && v->u.f == 2e3);
    parse_err("f(float x=1e400) -> ()", 10, "out of the range of a double");
    parse_err("f(float x=-1e400) -> ()", 11, "out of the range of a double");
    parse_err("f(float x=1e-400) -> ()", 10, "out of the range of a double");
    parse_err("f(complex x=1e999j) -> ()", 12, "out of the range of a double");
    parse_err("f(float x=nan) -> ()", 10, "'nan' is not a number PyTorch reads");
    parse_err("f(float x=-nan) -> ()", 11, "'nan' is not a number PyTorch reads");
    parse_err("f(float x=inf) -> ()", 10, "'inf' is not a number");
    parse_err("f(float x=-inf) -> ()", 11, "'inf' is not a number");
    parse_err("f(float[] x=[1.0, inf]) -> ()", 18, "'inf' is not a number");
    v = default_of("f(float x=1.7976931348623157e308) -> ()");
    CHECK(v && v->kind == SG_VAL_FLOAT && v->u.f > 1.79e308);
    /* strings: \x, \u, \r, \0 refused; octal read; an escaped line break is one */
    parse_err("f(str x=\"\\x41\") -> ()", 9, "'\\x' escapes");
    parse_err("f(str x='ab\\u0041') -> ()", 11, "'\\u' escapes");
    parse_err("f(str x='\\r') -> ()", 9, "backslash before 'r'");
    parse_err("f(str x='\\0') -> ()", 9, "backslash before '0'");
    parse_err("f(str x='\\777') -> ()", 9, "octal \\000 to \\377");
    parse_err("f(str x='a\nb') -> ()", 8, "unterminated string (a string ends on its line)");
    v = default_of("f(str x='\\101\\000z') -> ()");
    CHECK(v && v->kind == SG_VAL_STR && v->u.str.len == 3 && memcmp(v->u.str.s, "A\0z", 3) == 0);
    v = default_of("f(str x=\"a\\\nb\\a\\v\") -> ()");
    CHECK(v && v->u.str.len == 5 && memcmp(v->u.str.s, "a\nb\a\v", 5) == 0);
    round_trip("f(str x='\\101', str y=\"a\\\nb\") -> ()", "f(str x='\\101', str y=\"a\\\nb\") -> ()");
}

/* c10's parseName: 'default' and overload names starting with '__' are refused, in every
 * namespace. */
static void test_c10_overload_names(void) {
    parse_err("f.default(Tensor x) -> Tensor", 2, "'default' is not a legal overload name");
    parse_err("my_ops::f.default(Tensor x) -> Tensor", 10, "not a legal overload name");
    parse_err("f.__name__(Tensor x) -> Tensor", 2, "'__name__' is not a legal overload name");
    parse_err("f.__x(Tensor x) -> Tensor", 2, "starting with '__'");
    CHECK(parse_ok("f.default_(Tensor x) -> Tensor") != NULL);
    CHECK(parse_ok("f._x_(Tensor x) -> Tensor") != NULL);
}

/* c10 reads an annotation after any named type and after '[]' (schema_type_parser.cpp); the
 * parser keeps it, and torchgen's rule (Tensor only) is the validator's. */
static void test_c10_annotations(void) {
    const char *text = "my_ops::f(int(a!) x, int!? y, float(b)[] z, Dict(str, Tensor)(c) d, "
                       "t(e) v, Scalar[](f!) w) -> int(a!)";
    round_trip(text, text);
    const sg_schema *s = parse_ok(text);
    if (!s) return;
    /* kept in the type; but only a Tensor-like argument is written (nothing to write through
     * an int), so the op is functional, not out or mutable */
    CHECK(s->args[0].type->alias && s->args[0].type->alias->write);
    CHECK(s->args[1].type->kind == SG_TY_OPTIONAL && s->args[1].type->elems[0]->alias->fresh);
    CHECK(s->args[2].type->elems[0]->alias && s->args[5].type->alias->write);
    for (uint32_t i = 0; i < s->nargs; i++) CHECK(!sg_arg_is_write(&s->args[i]));
    CHECK(!sg_arg_is_write(&s->rets[0]) && sg_schema_kind_of(s) == SG_KIND_FUNCTIONAL);
    s = parse_ok("my_ops::k(Tensor self, *, int(a!) n, Tensor(b!) out) -> Tensor(b!)");
    CHECK(s && !sg_arg_is_write(&s->args[1]) && sg_arg_is_write(&s->args[2]));
    CHECK(s && sg_schema_kind_of(s) == SG_KIND_OUT && !sg_arg_is_out(s, &s->args[1]));
    /* duplicate argument names are the validator's business: both kept as written */
    s = parse_ok("my_ops::g(Tensor x, Tensor x, *, int x=1) -> Tensor");
    CHECK(s && s->nargs == 3);
    if (s) {
        CHECK_STR(s->args[0].name, "x");
        CHECK_STR(s->args[2].name, "x");
    }
}

/* The arena: zeroed blocks; growth in chunks (small ones first, huge pages past 2 MiB); a
 * reservation makes the blocks that follow one run of memory. */
static void test_arena(void) {
    sg_arena *a = sg_arena_new(NULL, NULL);
    char     *first = sg_arena_alloc(a, 100), *big = sg_arena_alloc(a, 3u << 20);
    CHECK(first && big && ((uintptr_t)first & 7) == 0);
    bool zero = true;
    for (size_t i = 0; big && i < 3u << 20; i += 4093) zero &= big[i] == 0;
    CHECK(zero);
    CHECK(sg_arena_reserve(a, 1u << 20));
    char *prev = sg_arena_alloc(a, 8192);
    bool  run = prev != NULL;
    for (int i = 0; i < 100 && run; i++) {
        char *p = sg_arena_alloc(a, 8192);
        run = p == prev + 8192;
        prev = p;
    }
    CHECK(run);
    CHECK(sg_arena_used(a) == 104 + (3u << 20) + 101 * 8192);
    /* a block of whole huge pages starts on a huge-page boundary, its chunk's header first,
     * so the kernel can back it with huge pages */
    CHECK(big && ((uintptr_t)big & ((2u << 20) - 1)) < 64);
    sg_arena_free(a);
}

/* An arena past 256 KiB takes its chunks in huge pages, and serves what follows from the
 * chunk with more room left: a 300 KiB file read into a fresh arena, then small blocks. */
static void test_arena_growth(void) {
    sg_arena *a = sg_arena_new(NULL, NULL);
    char *small = sg_arena_alloc(a, 100), *file = sg_arena_alloc(a, 300 * 1024);
    char *next = sg_arena_alloc(a, 64);
    CHECK(small && file && next);
    CHECK(file && ((uintptr_t)file & ((2u << 20) - 1)) < 64);
    CHECK(next == file + 300 * 1024);
    sg_arena_free(a);
}

/* A hook that hands out memory full of garbage: what the arena hands on is zeroed all the
 * same (it zeroes each block as it gives it out), and a copied string is exact. */
static void *garbage_alloc(void *ud, void *ptr, size_t size) {
    (void)ud;
    if (size == 0) {
        free(ptr);
        return NULL;
    }
    void *p = malloc(size);
    if (p) memset(p, 0xA5, size);
    return p;
}

/* One arena adopts another's blocks: they outlive it, the counts add up, and arenas over
 * different hooks are refused, with nothing moved. */
static void test_arena_adopt(void) {
    sg_arena *a = sg_arena_new(NULL, NULL), *b = sg_arena_new(NULL, NULL);
    sg_arena *g = sg_arena_new(garbage_alloc, NULL);
    char *x = sg_arena_strndup(a, "kept", 4), *y = sg_arena_strndup(b, "moved", 5);
    char *big = sg_arena_alloc(b, 3u << 20);
    CHECK(x && y && big && g);
    CHECK(!sg_arena_adopt(a, g)); /* different hooks */
    CHECK(sg_arena_adopt(a, b));  /* b is freed */
    CHECK(sg_arena_used(a) == 8 + 8 + (3u << 20));
    char *z = sg_arena_strndup(a, "after", 5);
    CHECK_STR(x, "kept");
    CHECK_STR(y, "moved");
    CHECK_STR(z, "after");
    if (big) big[(3u << 20) - 1] = 1; /* still a's memory */
    sg_arena_free(a);
    sg_arena_free(g);
}

static void test_arena_zeroes(void) {
    sg_arena *a = sg_arena_new(garbage_alloc, NULL);
    CHECK(a != NULL);
    if (!a) return;
    bool zero = true;
    for (size_t n = 1; n < 300000; n = n * 3 + 1) {
        char *p = sg_arena_alloc(a, n), *s = sg_arena_strndup(a, "abc", 3);
        CHECK(p && s);
        for (size_t i = 0; p && i < n; i++) zero &= p[i] == 0;
        if (s) CHECK_STR(s, "abc");
    }
    CHECK(zero);
    sg_arena_free(a);
}

int main(void) {
    test_arena();
    test_arena_zeroes();
    test_arena_growth();
    test_arena_adopt();
    arena = sg_arena_new(NULL, NULL);
    test_names();
    test_types();
    test_alias();
    test_defaults();
    test_returns();
    test_kinds();
    test_round_trip();
    test_errors();
    test_hostile_nesting();
    test_c10_values();
    test_c10_overload_names();
    test_c10_annotations();
    sg_arena_free(arena);
    return check_result("test_schema_parse");
}
