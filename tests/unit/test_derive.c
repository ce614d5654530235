/* test_derive.c: sg_model_derive (gen/derive.c, docs/derive.md): structured links, the ops
 * that `autogen:` asks for, exact derived schemas, every diagnostic with its position, and
 * PyTorch's own native_functions.yaml, every autogen name of which must derive cleanly into
 * the schemas torchgen generates. */
#include "check.h"
#include "derive.h"
#include "model.h"

typedef struct fixture {
    sg_model    m;
    sg_diag     d;
    const char *yaml;
    int         validate_errors, derive_errors;
    uint32_t    nwritten; /* ops before derive */
} fixture;

static void run(fixture *f, const char *yaml) {
    sg_model_init(&f->m);
    sg_diag_init(&f->d);
    f->d.max_errors = 0;
    f->yaml = yaml;
    sg_load_buffer(&f->m, "test.yaml", yaml, strlen(yaml), &f->d);
    CHECK(f->d.nerrors == 0);
    CHECK(sg_model_group(&f->m, &f->d) == 0);
    f->validate_errors = sg_validate(&f->m, &f->d);
    f->nwritten = f->m.nops;
    f->derive_errors = sg_model_derive(&f->m, &f->d);
}

static const char *out(const fixture *f) { return f->d.out.data ? f->d.out.data : ""; }

static void done(fixture *f) {
    if (check_failures) fprintf(stderr, "%s", out(f));
    sg_diag_free(&f->d);
    sg_model_free(&f->m);
}

/* The op "name" or "name.overload" (namespace aside), or NULL. */
static sg_op *find(const sg_model *m, const char *full) {
    for (uint32_t i = 0; i < m->nops; i++) {
        const sg_schema *s = &m->ops[i]->schema;
        size_t n = strlen(s->name);
        if (!m->ops[i]->parsed || strncmp(full, s->name, n) != 0) continue;
        if ((!full[n] && !s->overload[0]) || (full[n] == '.' && strcmp(full + n + 1, s->overload) == 0))
            return m->ops[i];
    }
    return NULL;
}

static const char *func_of(const sg_model *m, const char *full) {
    const sg_op *op = find(m, full);
    return op ? op->func : "(no such op)";
}

static uint32_t nderived(const fixture *f) { return f->m.nops - f->nwritten; }

/* Column (1-based) of the first `at` on line `line` of text, or 0. */
static int column(const char *text, int line, const char *at) {
    for (int l = 1; l < line && text; l++) {
        text = strchr(text, '\n');
        if (text) text++;
    }
    if (!text) return 0;
    const char *end = strchr(text, '\n'), *p = strstr(text, at);
    return p && (!end || p < end) ? (int)(p - text) + 1 : 0;
}

/* Whether the diagnostics hold exactly "test.yaml:LINE:COL: SEV: MSG" on a line of their own,
 * COL being where `at` first appears on that line of the input. */
static bool has_diag(const fixture *f, int line, const char *at, const char *sev, const char *msg) {
    char want[1024];
    snprintf(want, sizeof want, "test.yaml:%d:%d: %s: %s\n", line, column(f->yaml, line, at), sev,
             msg);
    const char *p = strstr(out(f), want);
    bool ok = p && (p == out(f) || p[-1] == '\n');
    if (!ok) fprintf(stderr, "missing diagnostic: %s", want);
    return ok;
}

/* Whether op sits at `line`, column of `at` (the autogen item it came from). */
static bool at_pos(const fixture *f, const sg_op *op, int line, const char *at) {
    return op && op->pos.line == (uint32_t)line && op->pos.col == (uint32_t)column(f->yaml, line, at);
}

/* ---- structured links -------------------------------------------------------------------- */

static void test_structured_links(void) {
    fixture f;
    run(&f, "- func: sa.Tensor(Tensor self, Tensor other) -> Tensor\n"
            "  structured_delegate: sa.out\n"
            "- func: sa_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)\n"
            "  structured_delegate: sa.out\n"
            "- func: sa.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)\n"
            "  structured: True\n"
            "  dispatch:\n"
            "    CPU: sa_out\n"
            "- func: plain(Tensor self) -> Tensor\n"
            "  dispatch:\n"
            "    CPU: plain\n");
    CHECK(f.validate_errors == 0 && f.derive_errors == 0);
    sg_op *fn = find(&f.m, "sa.Tensor"), *ip = find(&f.m, "sa_.Tensor"), *o = find(&f.m, "sa.out");
    CHECK(fn->structured_out == o && ip->structured_out == o && !o->structured_out);
    CHECK(o->structured_is_out && !fn->structured_is_out && !ip->structured_is_out);
    CHECK(o->ndelegates == 2 && o->delegates[0] == fn && o->delegates[1] == ip);
    CHECK(fn->ndelegates == 0 && !fn->delegates);
    const sg_op *p = find(&f.m, "plain");
    CHECK(!p->structured_out && !p->structured_is_out && !p->ndelegates);
    CHECK(nderived(&f) == 0);
    done(&f);
}

/* Outside aten, validate leaves delegates alone, so derive reports them. */
static void test_structured_errors(void) {
    fixture f;
    run(&f, "- func: my::d1(Tensor self) -> Tensor\n"
            "  structured_delegate: nothing.out\n"
            "- func: my::d2(Tensor self) -> Tensor\n"
            "  structured_delegate: d3.out\n"
            "- func: my::d3.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
            "- func: my::d4(Tensor self) -> Tensor\n"
            "  structured_delegate: d5\n"
            "- func: my::d5(Tensor self) -> Tensor\n"
            "  structured: True\n"
            "- func: my::d6(Tensor self) -> Tensor\n"
            "  structured_delegate: other::d8.out\n"
            "- func: my::d7(Tensor self) -> Tensor\n"
            "  structured_delegate: my::d8.out\n"
            "- func: my::d8.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
            "  structured: True\n");
    CHECK(f.validate_errors == 0);
    CHECK(f.derive_errors == 4);
    CHECK(has_diag(&f, 2, "nothing.out", "error",
                   "structured_delegate 'nothing.out' names no operator of namespace 'my' [SG-401]"));
    CHECK(has_diag(&f, 4, "d3.out", "error",
                   "structured_delegate 'd3.out' is not structured; add 'structured: True' to it [SG-402]"));
    CHECK(has_diag(&f, 5, "d3", "note", "'d3.out' is defined here"));
    CHECK(has_diag(&f, 7, "d5", "error",
                   "structured_delegate 'd5' is not an out operator; a structured kernel is its out "
                   "variant's [SG-402]"));
    CHECK(has_diag(&f, 8, "d5", "note", "'d5' is defined here"));
    CHECK(has_diag(&f, 11, "other::", "error",
                   "structured_delegate 'other::d8.out' names namespace 'other'; a delegate is in the "
                   "operator's own namespace, 'my' [SG-401]"));
    const sg_op *d7 = find(&f.m, "d7"), *d8 = find(&f.m, "d8.out");
    CHECK(d7->structured_out == d8 && d8->ndelegates == 1 && d8->delegates[0] == d7);
    CHECK(!find(&f.m, "d1")->structured_out && !find(&f.m, "d2")->structured_out);
    CHECK(!find(&f.m, "d3.out")->structured_is_out && !find(&f.m, "d5")->structured_is_out);
    done(&f);
}

/* An aten op with a bad delegate: validate reports it (SG-308); derive says nothing more. */
static void test_structured_aten_silent(void) {
    fixture f;
    run(&f, "- func: q1(Tensor self) -> Tensor\n"
            "  structured_delegate: q9.out\n");
    CHECK(f.validate_errors >= 1 && strstr(out(&f), "[SG-308]"));
    CHECK(f.derive_errors == 0 && !strstr(out(&f), "[SG-40"));
    CHECK(!find(&f.m, "q1")->structured_out);
    done(&f);
}

/* ---- autogen: out variants --------------------------------------------------------------- */

static void test_out_of_functional(void) {
    fixture f;
    run(&f, "- func: f(Tensor self, int k=2) -> Tensor\n"
            "  dispatch:\n"
            "    CPU: f_cpu\n"
            "  autogen: f.out\n"
            "- func: g(Tensor self) -> (Tensor, Tensor)\n"
            "  dispatch:\n"
            "    CPU: g_cpu\n"
            "  autogen: g.out\n"
            "- func: h.Tensor(Tensor self) -> Tensor[]\n"
            "  dispatch:\n"
            "    CPU: h_cpu\n"
            "  autogen: h.Tensor_out\n"
            "- func: full_thing(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
            "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor\n"
            "  dispatch:\n"
            "    CompositeExplicitAutograd: full_thing\n"
            "  autogen: full_thing.out\n");
    CHECK(f.validate_errors == 0 && f.derive_errors == 0);
    CHECK(nderived(&f) == 4);
    CHECK_STR(func_of(&f.m, "f.out"), "f.out(Tensor self, int k=2, *, Tensor(a!) out) -> Tensor(a!)");
    CHECK_STR(func_of(&f.m, "g.out"),
              "g.out(Tensor self, *, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))");
    CHECK_STR(func_of(&f.m, "h.Tensor_out"), "h.Tensor_out(Tensor self, *, Tensor(a!)[] out) -> ()");
    /* the TensorOptions group goes, as in torchgen's Arguments.signature() */
    CHECK_STR(func_of(&f.m, "full_thing.out"),
              "full_thing.out(SymInt[] size, *, MemoryFormat? memory_format=None, Tensor(a!) out) "
              "-> Tensor(a!)");

    sg_op *fo = find(&f.m, "f.out"), *fn = find(&f.m, "f");
    CHECK(fo->parsed && fo->autogen_from == fn);
    CHECK_STR(fo->autogen_kind, "out");
    CHECK(at_pos(&f, fo, 4, "f.out"));
    CHECK_STR(fo->ns, "aten");
    CHECK(sg_schema_kind_of(&fo->schema) == SG_KIND_OUT);
    /* the keys torchgen gives a generated op */
    CHECK(fo->variants == SG_VARIANT_FUNCTION && fo->structured == SG_FALSE);
    CHECK(fo->device_guard == SG_FALSE);
    CHECK_STR(fo->device_check, "NoCheck");
    CHECK(fo->has_dispatch && fo->ndispatch == 1 && fo->dispatch[0].nkeys == 1);
    CHECK_STR(fo->dispatch[0].keys[0], "CompositeExplicitAutograd");
    CHECK_STR(fo->dispatch[0].kernel, "f_out");
    CHECK_STR(find(&f.m, "h.Tensor_out")->dispatch[0].kernel, "h_Tensor_out");
    CHECK_STR(find(&f.m, "full_thing.out")->dispatch[0].kernel, "full_thing_out_symint");
    CHECK(fo->tags.n == 1);
    CHECK_STR(fo->tags.items[0], "generated");
    CHECK(!fn->autogen_from && !fn->autogen_kind);
    /* the groups were rebuilt: the new op sits in its functional's group */
    CHECK(fo->group == fn->group && fn->group->ops[SG_KIND_OUT] == fo);
    CHECK(find(&f.m, "g.out")->group->ops[SG_KIND_FUNCTIONAL] == find(&f.m, "g"));
    done(&f);
}

static void test_out_of_inplace(void) {
    fixture f;
    run(&f, "- func: p(Tensor self, Scalar other) -> Tensor\n"
            "  dispatch:\n"
            "    CPU: p\n"
            "- func: p_(Tensor(a!) self, Scalar other) -> Tensor(a!)\n"
            "  dispatch:\n"
            "    CPU: p_\n"
            "  autogen: p.out\n"
            "- func: _foreach_q.Scalar(Tensor[] self, Scalar scalar) -> Tensor[]\n"
            "  device_check: NoCheck\n"
            "  dispatch:\n"
            "    CompositeExplicitAutograd: fq\n"
            "  autogen: _foreach_q.Scalar_out\n"
            "- func: _foreach_q_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()\n"
            "  device_check: NoCheck\n"
            "  dispatch:\n"
            "    CompositeExplicitAutograd: fq_\n"
            "  autogen: _foreach_q.Scalar_out\n"
            "- func: u_(Tensor(a!) self, Tensor(b!) tracker, Tensor found) -> Tensor(a!)\n"
            "  dispatch:\n"
            "    CPU: u_\n"
            "  autogen: u, u.out\n"
            "- func: _foreach_z_(Tensor(a!)[] self) -> ()\n"
            "  device_check: NoCheck\n"
            "  dispatch:\n"
            "    CPU: fz_\n"
            "  autogen: _foreach_z, _foreach_z.out\n"
            "- func: __lshift__.Scalar(Tensor self, Scalar other) -> Tensor\n"
            "  dispatch:\n"
            "    CPU: lshift\n"
            "- func: __ilshift__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)\n"
            "  dispatch:\n"
            "    CPU: ilshift\n"
            "  autogen: __lshift__.Scalar_out\n"
            "- func: rr_(Tensor(a!) self, *, Generator? generator=None) -> Tensor(a!)\n"
            "  tags: nondeterministic_seeded\n"
            "  dispatch:\n"
            "    CPU: rr_\n"
            "  autogen: rr, rr.out\n");
    CHECK(f.validate_errors == 0 && f.derive_errors == 0);
    CHECK_STR(func_of(&f.m, "p.out"), "p.out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)");
    /* listed by both variants: one op, derived from the in-place one, at its item */
    CHECK_STR(func_of(&f.m, "_foreach_q.Scalar_out"),
              "_foreach_q.Scalar_out(Tensor[] self, Scalar scalar, *, Tensor(a!)[] out) -> ()");
    sg_op *q = find(&f.m, "_foreach_q.Scalar_out");
    CHECK(q->autogen_from == find(&f.m, "_foreach_q_.Scalar"));
    CHECK(at_pos(&f, q, 17, "_foreach_q.Scalar_out"));
    /* only self turns read-only; the out argument takes its annotation */
    CHECK_STR(func_of(&f.m, "u.out"),
              "u.out(Tensor self, Tensor(b!) tracker, Tensor found, *, Tensor(a!) out) -> Tensor(a!)");
    CHECK_STR(func_of(&f.m, "u"),
              "u(Tensor self, Tensor tracker, Tensor found) -> (Tensor, Tensor tracker_out)");
    CHECK_STR(find(&f.m, "u")->autogen_kind, "functional");
    CHECK_STR(find(&f.m, "u")->dispatch[0].kernel, "u");
    CHECK(at_pos(&f, find(&f.m, "u"), 21, "u,") && at_pos(&f, find(&f.m, "u.out"), 21, "u.out"));
    CHECK_STR(func_of(&f.m, "_foreach_z"), "_foreach_z(Tensor[] self) -> Tensor[] self_out");
    CHECK_STR(func_of(&f.m, "_foreach_z.out"), "_foreach_z.out(Tensor[] self, *, Tensor(a!)[] out) -> ()");
    /* a generated op keeps the base's nondeterministic_seeded */
    const sg_op *rr = find(&f.m, "rr.out");
    CHECK_STR(rr->func, "rr.out(Tensor self, *, Generator? generator=None, Tensor(a!) out) -> Tensor(a!)");
    CHECK(rr->tags.n == 2);
    CHECK_STR(rr->tags.items[1], "nondeterministic_seeded");
    CHECK_STR(func_of(&f.m, "__lshift__.Scalar_out"),
              "__lshift__.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)");
    CHECK_STR(find(&f.m, "__lshift__.Scalar_out")->dispatch[0].kernel, "__lshift___Scalar_out");
    CHECK(nderived(&f) == 9);
    CHECK(find(&f.m, "u")->group == find(&f.m, "u_")->group);
    CHECK(find(&f.m, "u_")->group->ops[SG_KIND_FUNCTIONAL] == find(&f.m, "u"));
    CHECK(find(&f.m, "u_")->group->ops[SG_KIND_OUT] == find(&f.m, "u.out"));
    done(&f);
}

/* ---- autogen: the variants of a mutable op ----------------------------------------------- */

static void test_mutable(void) {
    fixture f;
    run(&f, "- func: mh(Tensor self, Tensor(a!) running, float c) -> (Tensor output, Tensor mask)\n"
            "  dispatch:\n"
            "    CPU: mh\n"
            "  autogen: mh_functional, mh.out\n"
            "- func: rn(Tensor self, Tensor(b!) noise, Generator? generator=None) -> Tensor\n"
            "  tags: nondeterministic_seeded\n"
            "  dispatch:\n"
            "    CPU: rn\n"
            "  autogen: rn_functional\n"
            "- func: rn.out(Tensor self, Tensor(b!) noise, Generator? generator=None, *, "
            "Tensor(a!) out) -> Tensor(a!)\n"
            "  tags: nondeterministic_seeded\n"
            "  dispatch:\n"
            "    CPU: rn_out\n");
    CHECK(f.validate_errors == 0 && f.derive_errors == 0);
    CHECK(nderived(&f) == 3);
    CHECK_STR(func_of(&f.m, "mh_functional"),
              "mh_functional(Tensor self, Tensor running, float c) -> "
              "(Tensor output, Tensor mask, Tensor running_out)");
    /* torchgen's mutable_to_out_signature: the written positional stays written */
    CHECK_STR(func_of(&f.m, "mh.out"),
              "mh.out(Tensor self, Tensor(a!) running, float c, *, Tensor(b!) out0, Tensor(c!) out1) "
              "-> (Tensor(b!), Tensor(c!))");
    CHECK_STR(func_of(&f.m, "rn_functional"),
              "rn_functional(Tensor self, Tensor noise, Generator? generator=None) -> "
              "(Tensor, Tensor noise_out)");
    const sg_op *mf = find(&f.m, "mh_functional"), *mo = find(&f.m, "mh.out"), *mh = find(&f.m, "mh");
    CHECK_STR(mf->autogen_kind, "functional");
    CHECK_STR(mo->autogen_kind, "out");
    CHECK(mf->autogen_from == mh && mo->autogen_from == mh);
    CHECK(mh->group->ops[SG_KIND_FUNCTIONAL] == mf && mh->group->ops[SG_KIND_OUT] == mo);
    CHECK(mh->group->ops[SG_KIND_MUTABLE] == mh);
    CHECK_STR(mf->dispatch[0].kernel, "mh_functional");
    CHECK(find(&f.m, "rn_functional")->group == find(&f.m, "rn.out")->group);
    done(&f);
}

/* A namespace is kept, and fresh alias letters skip those the arguments use. */
static void test_namespace_and_letters(void) {
    fixture f;
    run(&f, "- func: my::k(Tensor(a) self, Tensor(b) other) -> (Tensor, Tensor)\n"
            "  autogen: k.out\n");
    CHECK(f.validate_errors == 0 && f.derive_errors == 0);
    const sg_op *k = find(&f.m, "k.out");
    CHECK_STR(k ? k->func : NULL, "my::k.out(Tensor self, Tensor other, *, Tensor(c!) out0, Tensor(d!) out1) "
                                   "-> (Tensor(c!), Tensor(d!))");
    CHECK_STR(k ? k->ns : NULL, "my");
    CHECK_STR(k ? k->schema.ns : NULL, "my");
    done(&f);
}

/* ---- autogen: errors --------------------------------------------------------------------- */

static void test_autogen_errors(void) {
    fixture f;
    run(&f, "- func: my::e1(Tensor self) -> Tensor\n"
            "  autogen: e1.Tensor_out\n"
            "- func: my::e2_(Tensor(a!) self) -> Tensor(a!)\n"
            "  autogen: e2.other\n"
            "- func: my::e3.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
            "  autogen: e3\n"
            "- func: my::e4(Tensor self) -> (Tensor, int)\n"
            "  autogen: e4.out\n"
            "- func: my::e5(Tensor self) -> ()\n"
            "  autogen: e5.out\n"
            "- func: my::e6_(Tensor self, Tensor(a!) x) -> ()\n"
            "  autogen: e6.out\n"
            "- func: my::e7(Tensor self) -> Tensor\n"
            "  autogen: e7.out\n"
            "- func: my::e7.out(Tensor self, int k, *, Tensor(a!) out) -> Tensor(a!)\n"
            "- func: my::e8(Tensor self, int out) -> Tensor\n"
            "  autogen: e8.out\n"
            "- func: my::e9(Tensor self, ...) -> Tensor\n"
            "  autogen: e9.out\n"
            "- func: my::e10(Tensor self) -> Tensor\n"
            "  autogen: e10.out, e10.out\n");
    CHECK(f.validate_errors == 0);
    CHECK(f.derive_errors == 9);
    CHECK(has_diag(&f, 2, "e1.Tensor_out", "error",
                   "autogen name 'e1.Tensor_out' is not a variant torchgen derives from 'e1': that is "
                   "'e1.out' (out) [SG-403]"));
    CHECK(has_diag(&f, 4, "e2.other", "error",
                   "autogen name 'e2.other' is not a variant torchgen derives from 'e2_': those are "
                   "'e2.out' (out) and 'e2' (functional) [SG-403]"));
    CHECK(has_diag(&f, 6, "e3", "error",
                   "autogen name 'e3': torchgen derives variants from functional, in-place and mutable "
                   "operators, not from out operator 'e3.out' [SG-403]"));
    CHECK(has_diag(&f, 8, "e4.out", "error",
                   "cannot derive 'e4.out' from 'e4': return 2 ('int') is not a tensor, and only "
                   "tensors become out arguments [SG-404]"));
    CHECK(has_diag(&f, 10, "e5.out", "error",
                   "cannot derive 'e5.out' from 'e5': it returns nothing, so there is no result for an "
                   "out argument to hold [SG-404]"));
    CHECK(has_diag(&f, 12, "e6.out", "error",
                   "cannot derive 'e6.out' from in-place 'e6_': it has no written 'self' to become the "
                   "out argument [SG-404]"));
    CHECK(has_diag(&f, 14, "e7.out", "error",
                   "autogen name 'e7.out' names an operator that already exists [SG-405]"));
    CHECK(has_diag(&f, 15, "e7", "note", "'e7.out' is defined here"));
    CHECK(has_diag(&f, 17, "e8.out", "error",
                   "the schema derived for 'e8.out', 'my::e8.out(Tensor self, int out, *, Tensor(a!) "
                   "out) -> Tensor(a!)', has two arguments named 'out' [SG-406]"));
    CHECK(has_diag(&f, 19, "e9.out", "error",
                   "cannot derive 'e9.out' from 'e9': its schema has '...' [SG-404]"));
    /* a name listed twice is one op, and no error */
    CHECK(nderived(&f) == 1);
    CHECK_STR(func_of(&f.m, "e10.out"), "my::e10.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
    done(&f);
}

/* Two unrelated ops asking for one name: the second is refused, with a note at the first. */
static void test_autogen_twice(void) {
    fixture f;
    run(&f, "- func: my::t_(Tensor(a!) self, int k) -> Tensor(a!)\n"
            "  autogen: t\n"
            "- func: my::t_.x(Tensor(a!) self) -> Tensor(a!)\n"
            "  autogen: t.x\n"
            "- func: my::v(Tensor self) -> Tensor\n"
            "  autogen: v.out\n"
            "- func: my::v_(Tensor(a!) self, int k) -> Tensor(a!)\n"
            "  autogen: v.out\n");
    CHECK(f.validate_errors == 0);
    CHECK(f.derive_errors == 1);
    CHECK(has_diag(&f, 8, "v.out", "error",
                   "autogen name 'v.out' names an operator that already exists [SG-405]"));
    CHECK(has_diag(&f, 6, "v.out", "note", "'v.out' is derived here, from 'v'"));
    CHECK(nderived(&f) == 3);
    CHECK_STR(func_of(&f.m, "t"), "my::t(Tensor self, int k) -> Tensor");
    CHECK_STR(func_of(&f.m, "t.x"), "my::t.x(Tensor self) -> Tensor");
    done(&f);
}

/* A second run adds nothing and reports nothing. */
static void test_idempotent(void) {
    fixture f;
    run(&f, "- func: w(Tensor self) -> Tensor\n"
            "  dispatch:\n"
            "    CPU: w\n"
            "  autogen: w.out\n"
            "- func: w2.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
            "  structured: True\n"
            "  dispatch:\n"
            "    CPU: w2_out\n"
            "- func: w2(Tensor self) -> Tensor\n"
            "  structured_delegate: w2.out\n");
    CHECK(f.validate_errors == 0 && f.derive_errors == 0 && nderived(&f) == 1);
    uint32_t n = f.m.nops;
    CHECK(sg_model_derive(&f.m, &f.d) == 0);
    CHECK(f.m.nops == n);
    CHECK(find(&f.m, "w2.out")->ndelegates == 1);
    CHECK(find(&f.m, "w.out")->group == find(&f.m, "w")->group);
    done(&f);
}

/* ---- PyTorch's native_functions.yaml ----------------------------------------------------- */

static bool present(const char *path) {
    FILE *p = fopen(path, "rb");
    if (p) fclose(p);
    return p != NULL;
}

/* Exact schemas of ops torchgen generates for PyTorch 2.11 (each as torchgen's
 * native_function_generation.py derives it; they appear so in its generated code). */
static const char *const corpus_expected[] = {
    "native_dropout.out(Tensor input, float p, bool? train, *, Tensor(a!) out0, Tensor(b!) out1) "
    "-> (Tensor(a!), Tensor(b!))",
    "_foreach_add.Scalar_out(Tensor[] self, Scalar scalar, *, Tensor(a!)[] out) -> ()",
    "_foreach_zero(Tensor[] self) -> Tensor[] self_out",
    "_foreach_zero.out(Tensor[] self, *, Tensor(a!)[] out) -> ()",
    "_foreach_lerp.List_out(Tensor[] self, Tensor[] tensors1, Tensor[] weights, *, "
    "Tensor(a!)[] out) -> ()",
    "_fused_moving_avg_obs_fq_helper_functional(Tensor self, Tensor observer_on, "
    "Tensor fake_quant_on, Tensor running_min, Tensor running_max, Tensor scale, "
    "Tensor zero_point, float averaging_const, int quant_min, int quant_max, int ch_axis, "
    "bool per_row_fake_quant=False, bool symmetric_quant=False) -> (Tensor output, Tensor mask, "
    "Tensor running_min_out, Tensor running_max_out, Tensor scale_out, Tensor zero_point_out)",
    "_fused_moving_avg_obs_fq_helper.out(Tensor self, Tensor observer_on, Tensor fake_quant_on, "
    "Tensor(a!) running_min, Tensor(b!) running_max, Tensor(c!) scale, Tensor(d!) zero_point, "
    "float averaging_const, int quant_min, int quant_max, int ch_axis, "
    "bool per_row_fake_quant=False, bool symmetric_quant=False, *, Tensor(e!) out0, "
    "Tensor(f!) out1) -> (Tensor(e!), Tensor(f!))",
    "rrelu_with_noise_functional(Tensor self, Tensor noise, Scalar lower=0.125, "
    "Scalar upper=0.3333333333333333, bool training=False, Generator? generator=None) -> "
    "(Tensor, Tensor noise_out)",
    "_amp_update_scale(Tensor self, Tensor growth_tracker, Tensor found_inf, "
    "float scale_growth_factor, float scale_backoff_factor, int growth_interval) -> "
    "(Tensor, Tensor growth_tracker_out)",
    "_amp_update_scale.out(Tensor self, Tensor(b!) growth_tracker, Tensor found_inf, "
    "float scale_growth_factor, float scale_backoff_factor, int growth_interval, *, "
    "Tensor(a!) out) -> Tensor(a!)",
    "_amp_foreach_non_finite_check_and_unscale.out(Tensor[] self, Tensor(b!) found_inf, "
    "Tensor inv_scale, *, Tensor(a!)[] out) -> ()",
    "add.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!)",
    "__lshift__.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",
    "bernoulli.Tensor(Tensor self, Tensor p, *, Generator? generator=None) -> Tensor",
    "empty_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)",
    "_to_copy.out(Tensor self, *, bool non_blocking=False, MemoryFormat? memory_format=None, "
    "Tensor(a!) out) -> Tensor(a!)",
    "resize.out(Tensor self, SymInt[] size, *, MemoryFormat? memory_format=None, Tensor(a!) out) "
    "-> Tensor(a!)",
};

/* Distinct "ns::name" autogen items of the written ops; *items counts them all. */
static uint32_t distinct_items(const sg_model *m, uint32_t nwritten, uint32_t *items) {
    uint32_t distinct = 0;
    *items = 0;
    for (uint32_t i = 0; i < nwritten; i++)
        for (uint32_t k = 0; k < m->ops[i]->autogen.n; k++) {
            const char *a = m->ops[i]->autogen.items[k];
            bool seen = false;
            (*items)++;
            for (uint32_t j = 0; j <= i && !seen; j++)
                for (uint32_t l = 0; l < m->ops[j]->autogen.n && !seen; l++)
                    seen = (j < i || l < k) && strcmp(m->ops[j]->autogen.items[l], a) == 0 &&
                           strcmp(m->ops[j]->ns, m->ops[i]->ns) == 0;
            distinct += !seen;
        }
    return distinct;
}

static bool test_corpus(void) {
    const char *nf = SG_CORPUS_DIR "/native_functions.yaml", *tags = SG_CORPUS_DIR "/tags.yaml";
    if (!present(nf) || !present(tags)) {
        printf("test_corpus: skipped, %s or %s is absent\n", nf, tags);
        return false;
    }
    fixture f;
    sg_model_init(&f.m);
    sg_diag_init(&f.d);
    f.d.max_errors = 0;
    f.yaml = "";
    CHECK(sg_load_file(&f.m, tags, &f.d) == 0);
    CHECK(sg_load_file(&f.m, nf, &f.d) == 0);
    CHECK(f.m.nops == 2674);
    CHECK(sg_model_group(&f.m, &f.d) == 0);
    CHECK(sg_validate(&f.m, &f.d) == 0);
    f.nwritten = f.m.nops;
    uint32_t ngroups = f.m.ngroups;
    CHECK(sg_model_derive(&f.m, &f.d) == 0);
    CHECK(f.d.nerrors == 0);

    uint32_t items, distinct = distinct_items(&f.m, f.nwritten, &items), entries = 0;
    for (uint32_t i = 0; i < f.nwritten; i++) entries += f.m.ops[i]->autogen.n > 0;
    printf("corpus: %u entries carry autogen, %u items, %u distinct; %u ops derived\n", entries,
           items, distinct, nderived(&f));
    CHECK(entries == 499 && items == 535);
    /* three names are listed by both variants of a pair (_foreach_lerp.List_out and kin) */
    CHECK(distinct == 532);
    CHECK(nderived(&f) == distinct);

    /* every derived op: canonical, re-parses to the same model, in its base's group and slot */
    sg_buf b;
    sg_buf_init(&b);
    sg_arena *a = sg_arena_new(NULL, NULL);
    uint32_t canonical = 0, reparsed = 0, grouped = 0, outs = 0, functionals = 0;
    for (uint32_t i = f.nwritten; i < f.m.nops; i++) {
        const sg_op *op = f.m.ops[i];
        sg_schema s;
        sg_schema_error err;
        b.len = 0;
        sg_schema_print(&b, &op->schema, true);
        sg_buf_putc(&b, '\0');
        canonical += strcmp(b.data, op->func) == 0;
        reparsed += sg_schema_parse(b.data, b.len - 1, a, &s, &err) == SG_SCHEMA_OK &&
                    sg_schema_equal(&s, &op->schema);
        sg_schema_kind k = sg_schema_kind_of(&op->schema);
        grouped += op->group && op->group == op->autogen_from->group && op->group->ops[k] == op;
        outs += strcmp(op->autogen_kind, "out") == 0 && k == SG_KIND_OUT;
        functionals += strcmp(op->autogen_kind, "functional") == 0 && k == SG_KIND_FUNCTIONAL;
        CHECK(op->parsed && op->autogen_from && !op->autogen_from->autogen_from);
    }
    CHECK(canonical == distinct && reparsed == distinct && grouped == distinct);
    CHECK(outs + functionals == distinct);
    printf("corpus: %u out variants, %u functional variants; %u groups, %u before derive\n", outs,
           functionals, f.m.ngroups, ngroups);
    CHECK(f.m.ngroups == ngroups); /* every derived op joined an existing group */
    sg_arena_free(a);
    sg_buf_free(&b);

    for (size_t i = 0; i < sizeof corpus_expected / sizeof *corpus_expected; i++) {
        const char *want = corpus_expected[i];
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(want, "("), want);
        const sg_op *op = find(&f.m, name);
        CHECK(op && op->autogen_from);
        CHECK_STR(op ? op->func : NULL, want);
    }
    const sg_op *lerp = find(&f.m, "_foreach_lerp.List_out");
    CHECK(lerp && lerp->autogen_from == find(&f.m, "_foreach_lerp_.List"));
    CHECK_STR(find(&f.m, "add.Scalar_out")->dispatch[0].kernel, "add_Scalar_out");
    CHECK_STR(find(&f.m, "new_empty.out")->dispatch[0].kernel, "new_empty_out_symint");
    CHECK_STR(find(&f.m, "_fused_moving_avg_obs_fq_helper_functional")->dispatch[0].kernel,
              "_fused_moving_avg_obs_fq_helper_functional");

    /* structured links: add.out and its two delegates; every delegate resolves */
    const sg_op *add_out = find(&f.m, "add.out");
    CHECK(add_out->structured_is_out && add_out->ndelegates == 2);
    CHECK(find(&f.m, "add.Tensor")->structured_out == add_out);
    CHECK(find(&f.m, "add_.Tensor")->structured_out == add_out);
    uint32_t delegating = 0, linked = 0, structured_outs = 0, delegates = 0;
    for (uint32_t i = 0; i < f.m.nops; i++) {
        const sg_op *op = f.m.ops[i];
        delegating += op->structured_delegate != NULL;
        linked += op->structured_out != NULL && op->structured_out->structured_is_out;
        structured_outs += op->structured_is_out;
        delegates += op->ndelegates;
    }
    printf("corpus: %u structured out ops, %u delegating ops\n", structured_outs, delegating);
    CHECK(linked == delegating && delegates == delegating && structured_outs > 0);

    /* a second run changes nothing */
    uint32_t n = f.m.nops;
    CHECK(sg_model_derive(&f.m, &f.d) == 0 && f.m.nops == n);
    done(&f);
    return true;
}

int main(void) {
    test_structured_links();
    test_structured_errors();
    test_structured_aten_silent();
    test_out_of_functional();
    test_out_of_inplace();
    test_mutable();
    test_namespace_and_letters();
    test_autogen_errors();
    test_autogen_twice();
    test_idempotent();
    bool corpus = test_corpus();
    int rc = check_result("test_derive");
    if (rc == 0 && !corpus) {
        fprintf(stderr, "test_derive: skipped (the corpus is absent)\n");
        return 77;
    }
    return rc;
}
