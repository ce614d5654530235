/* Unit tests of the schema-string lexer, parser and canonical printer (gen/schema). */
#include "check.h"
#include "schema/sg_schema.h"

static sg_arena *arena;

static const sg_schema *parse_ok(const char *text) {
    static sg_schema s;
    sg_schema_error err;
    int rc = sg_schema_parse(text, strlen(text), arena, &s, &err);
    if (rc != SG_SCHEMA_OK) {
        fprintf(stderr, "unexpected error at %u: %s\n  in: %s\n", err.offset, err.msg, text);
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
        fprintf(stderr, "error check failed for: %s\n  want offset %u containing '%s'\n"
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
        "f(Tensor self, int a=1, int b=-100, float c=1e-05, float d=-inf, float e=2, "
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
    parse_err("f(int(a) x) -> ()", 5, "cannot alias");
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
    parse_err("f(str x='\\q') -> ()", 9, "unknown escape");
    parse_err("f(int x=99999999999999999999) -> ()", 8, "out of range");
    parse_err("f(Tensor x, int y=1, Tensor z) -> ()", 21, "has no default but follows");
    parse_err("f(Tensor x) -> Tensor y=1", 23, "returns cannot have default");
    parse_err("f(Tensor \x01x) -> ()", 9, "byte 0x01");
    parse_err("f(..., Tensor x) -> ()", 7, "must be the last");
    parse_err("f(Dict(str) x) -> ()", 2, "two types");
    char deep[400] = "f(";
    for (int i = 0; i < 40; i++) strcat(deep, "Future(");
    strcat(deep, "int");
    parse_err(deep, 2 + 33 * 7, "nested more than");
    /* a NUL inside the text is a bad character, not the end */
    sg_schema s;
    sg_schema_error err;
    CHECK(sg_schema_parse("f(Tensor x)\0 -> ()", 18, arena, &s, &err) == SG_SCHEMA_ESYNTAX);
    CHECK(err.offset == 11);
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
    sg_arena_free(a);
}

int main(void) {
    test_arena();
    arena = sg_arena_new(NULL, NULL);
    test_names();
    test_types();
    test_alias();
    test_defaults();
    test_returns();
    test_kinds();
    test_round_trip();
    test_errors();
    sg_arena_free(arena);
    return check_result("test_schema_parse");
}
