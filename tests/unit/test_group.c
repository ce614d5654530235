/* test_group.c: op groups (gen/group.c): the signature key, the slots, one op per signature
 * and kind (SG-301), and the groups of PyTorch's own native_functions.yaml. */
#include "check.h"
#include "model.h"

#include <time.h>

typedef struct fixture {
    sg_model m;
    sg_diag  d;
    int      group_errors;
} fixture;

static void load(fixture *f, const char *yaml) {
    sg_model_init(&f->m);
    sg_diag_init(&f->d);
    f->d.max_errors = 0;
    sg_load_buffer(&f->m, "test.yaml", yaml, strlen(yaml), &f->d);
    CHECK(f->d.nerrors == 0);
    f->group_errors = sg_model_group(&f->m, &f->d);
}

static void done(fixture *f) {
    if (check_failures) fprintf(stderr, "%s", f->d.out.data ? f->d.out.data : "");
    sg_diag_free(&f->d);
    sg_model_free(&f->m);
}

static const char *out(const fixture *f) { return f->d.out.data ? f->d.out.data : ""; }

/* The op written "name" or "name.overload" (namespace aside), or NULL. */
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

static const char *slot_name(const sg_op *op) {
    static char buf[4][128];
    static int k;
    if (!op) return "(none)";
    char *b = buf[k++ % 4];
    snprintf(b, 128, "%s%s%s", op->schema.name, op->schema.overload[0] ? "." : "",
             op->schema.overload);
    return b;
}

/* ---- the key ----------------------------------------------------------------------------- */

static void test_key_variants(void) {
    fixture f;
    load(&f, "- func: abs(Tensor self) -> Tensor\n"
             "- func: abs_(Tensor(a!) self) -> Tensor(a!)\n"
             "- func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n");
    CHECK(f.group_errors == 0);
    CHECK(f.m.ngroups == 1);
    const sg_group *g = f.m.groups[0];
    CHECK_STR(g->signature, "aten::abs(Tensor self) -> Tensor");
    CHECK_STR(slot_name(g->ops[SG_KIND_FUNCTIONAL]), "abs");
    CHECK_STR(slot_name(g->ops[SG_KIND_INPLACE]), "abs_");
    CHECK_STR(slot_name(g->ops[SG_KIND_OUT]), "abs.out");
    CHECK(!g->ops[SG_KIND_MUTABLE] && !g->ops[SG_KIND_SCRATCH] && !g->view);
    for (uint32_t i = 0; i < f.m.nops; i++) CHECK(f.m.ops[i]->group == g);
    done(&f);
}

/* Defaults and annotations are not part of the key; names and keyword-only-ness are. */
static void test_key_defaults_kwargs(void) {
    fixture f;
    load(&f, "- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n"
             "- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)\n"
             "- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)\n"
             "- func: add.Other(Tensor self, Tensor other, Scalar alpha) -> Tensor\n");
    CHECK(f.group_errors == 0);
    CHECK(f.m.ngroups == 2);
    CHECK_STR(f.m.groups[0]->signature, "aten::add(Tensor self, Tensor other, *, Scalar alpha) -> Tensor");
    CHECK_STR(f.m.groups[1]->signature, "aten::add(Tensor self, Tensor other, Scalar alpha) -> Tensor");
    CHECK(find(&f.m, "add.out")->group == f.m.groups[0]);
    CHECK(find(&f.m, "add.Other")->group == f.m.groups[1]);
    done(&f);
}

/* The augmented dunder pairs with its plain dunder; TensorOptions drop out of the key. */
static void test_key_dunder_tensor_options(void) {
    fixture f;
    load(&f, "- func: __and__.Tensor(Tensor self, Tensor other) -> Tensor\n"
             "- func: __iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)\n"
             "- func: zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
             "Device? device=None, bool? pin_memory=None) -> Tensor\n"
             "- func: zeros.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)\n");
    CHECK(f.group_errors == 0);
    CHECK(f.m.ngroups == 2);
    CHECK_STR(f.m.groups[0]->signature, "aten::__and__(Tensor self, Tensor other) -> Tensor");
    CHECK_STR(slot_name(f.m.groups[0]->ops[SG_KIND_INPLACE]), "__iand__.Tensor");
    CHECK_STR(f.m.groups[1]->signature, "aten::zeros(SymInt[] size) -> Tensor");
    CHECK_STR(slot_name(f.m.groups[1]->ops[SG_KIND_OUT]), "zeros.out");
    done(&f);
}

/* Written inputs that are not returned become returns: self, then out, then positionals;
 * the `_functional` twin of a mutable op joins it. */
static void test_key_mutable_inputs(void) {
    fixture f;
    load(&f, "- func: _bn(Tensor self, Tensor(a!) running, float m) -> (Tensor, Tensor)\n"
             "- func: _bn_functional(Tensor self, Tensor running, float m) -> (Tensor, Tensor, Tensor)\n"
             "- func: _bn.out(Tensor self, Tensor(a!) running, float m, *, Tensor(b!) out0, "
             "Tensor(c!) out1) -> (Tensor(b!), Tensor(c!))\n"
             "- func: resize_(Tensor(a!) self, SymInt[] size) -> ()\n");
    CHECK(f.group_errors == 0);
    CHECK(f.m.ngroups == 2);
    const sg_group *g = f.m.groups[0];
    CHECK_STR(g->signature, "aten::_bn(Tensor self, Tensor running, float m) -> (Tensor, Tensor, Tensor)");
    CHECK_STR(slot_name(g->ops[SG_KIND_MUTABLE]), "_bn");
    CHECK_STR(slot_name(g->ops[SG_KIND_FUNCTIONAL]), "_bn_functional");
    CHECK_STR(slot_name(g->ops[SG_KIND_OUT]), "_bn.out");
    CHECK_STR(f.m.groups[1]->signature, "aten::resize(Tensor self, SymInt[] size) -> Tensor");
    done(&f);
}

/* A view and its _copy twin meet; the view has its own slot, the in-place view is in-place. */
static void test_key_views(void) {
    fixture f;
    load(&f, "- func: transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)\n"
             "- func: transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)\n"
             "  tags: inplace_view\n"
             "- func: transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor\n"
             "- func: transpose_copy.int_out(Tensor self, int dim0, int dim1, *, Tensor(a!) out) "
             "-> Tensor(a!)\n");
    CHECK(f.group_errors == 0);
    CHECK(f.m.ngroups == 1);
    const sg_group *g = f.m.groups[0];
    CHECK_STR(g->signature, "aten::transpose(Tensor self, int dim0, int dim1) -> Tensor");
    CHECK_STR(slot_name(g->view), "transpose.int");
    CHECK_STR(slot_name(g->ops[SG_KIND_INPLACE]), "transpose_");
    CHECK_STR(slot_name(g->ops[SG_KIND_FUNCTIONAL]), "transpose_copy.int");
    CHECK_STR(slot_name(g->ops[SG_KIND_OUT]), "transpose_copy.int_out");
    done(&f);
}

/* Namespaces keep groups apart; a custom namespace may repeat a kind without an error. */
static void test_key_namespaces(void) {
    fixture f;
    load(&f, "- func: my_ops::f(Tensor x) -> Tensor\n"
             "- func: my_ops::f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)\n"
             "- func: f(Tensor x) -> Tensor\n"
             "- func: my_ops::f.again(Tensor x) -> Tensor\n");
    CHECK(f.group_errors == 0);
    CHECK(f.m.ngroups == 2);
    CHECK_STR(f.m.groups[0]->signature, "my_ops::f(Tensor x) -> Tensor");
    CHECK_STR(slot_name(f.m.groups[0]->ops[SG_KIND_OUT]), "f.out");
    CHECK_STR(slot_name(f.m.groups[0]->ops[SG_KIND_FUNCTIONAL]), "f");
    CHECK_STR(f.m.groups[1]->signature, "aten::f(Tensor x) -> Tensor");
    done(&f);
}

/* ---- one op per signature and kind (SG-301, torchgen's V-50) ---------------------------- */

static void test_same_kind_twice(void) {
    fixture f;
    load(&f, "- func: g(Tensor self) -> Tensor\n"
             "- func: g.other(Tensor self) -> Tensor\n"
             "- func: h.a(Tensor self, int x=1) -> Tensor\n"
             "- func: h.b(Tensor self, int x=2) -> Tensor\n");
    CHECK(f.group_errors == 1);
    CHECK(strstr(out(&f), "test.yaml:2:9: error: 'g.other' is a second functional variant of "
                          "signature 'aten::g(Tensor self) -> Tensor'"));
    CHECK(strstr(out(&f), "[SG-301]"));
    CHECK(strstr(out(&f), "test.yaml:1:9: note: the first functional variant, 'g', is here"));
    /* h.a and h.b differ in a default: torchgen keeps them apart, so no error */
    CHECK(!strstr(out(&f), "'h.b'"));
    CHECK(find(&f.m, "g.other")->group == find(&f.m, "g")->group);
    CHECK_STR(slot_name(find(&f.m, "g")->group->ops[SG_KIND_FUNCTIONAL]), "g");
    done(&f);
}

static void test_view_beside_functional(void) {
    fixture f;
    /* torchgen's pre-grouping sees two functional ops (a view is functional by kind) */
    load(&f, "- func: v(Tensor(a) self) -> Tensor(a)\n"
             "- func: v.copied(Tensor self) -> Tensor\n"
             "- func: w(Tensor(a) self) -> Tensor(a)\n"
             "- func: w_copy(Tensor self) -> Tensor\n");
    CHECK(f.group_errors == 1);
    CHECK(strstr(out(&f), "test.yaml:2:9: error: 'v.copied' is a second functional variant"));
    done(&f);
}

/* ---- PyTorch's native_functions.yaml ----------------------------------------------------- */

static void test_corpus(void) {
    const char *path = SG_CORPUS_DIR "/native_functions.yaml";
    FILE *probe = fopen(path, "rb");
    if (!probe) {
        printf("test_corpus: skipped, %s is absent\n", path);
        return;
    }
    fclose(probe);
    fixture f;
    sg_model_init(&f.m);
    sg_diag_init(&f.d);
    f.d.max_errors = 0;
    CHECK(sg_load_file(&f.m, path, &f.d) == 0);
    struct timespec t0, t1;
    timespec_get(&t0, TIME_UTC);
    f.group_errors = sg_model_group(&f.m, &f.d);
    timespec_get(&t1, TIME_UTC);
    printf("grouped %u ops into %u groups in %.3f ms\n", f.m.nops, f.m.ngroups,
           (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    CHECK(f.m.nops == 2674);
    CHECK(f.group_errors == 0);

    const sg_group *g = find(&f.m, "abs")->group;
    CHECK_STR(g->signature, "aten::abs(Tensor self) -> Tensor");
    CHECK(g->ops[SG_KIND_INPLACE] == find(&f.m, "abs_"));
    CHECK(g->ops[SG_KIND_OUT] == find(&f.m, "abs.out"));

    g = find(&f.m, "add.Tensor")->group;
    CHECK(g->ops[SG_KIND_FUNCTIONAL] == find(&f.m, "add.Tensor"));
    CHECK(g->ops[SG_KIND_INPLACE] == find(&f.m, "add_.Tensor"));
    CHECK(g->ops[SG_KIND_OUT] == find(&f.m, "add.out"));
    CHECK(g != find(&f.m, "add.Scalar")->group);

    g = find(&f.m, "view")->group; /* view_copy.out is autogen'd, not written */
    CHECK(g->view == find(&f.m, "view"));
    CHECK(g->ops[SG_KIND_FUNCTIONAL] == find(&f.m, "view_copy"));
    CHECK(!g->ops[SG_KIND_OUT]);
    CHECK(find(&f.m, "__iand__.Tensor")->group == find(&f.m, "__and__.Tensor")->group);

    /* Every op is in a group; every out op sits in the out slot of its own group (659 of
     * them: each written with a written keyword-only argument, none a scratch op). */
    uint32_t outs = 0, with_out = 0;
    for (uint32_t i = 0; i < f.m.nops; i++) {
        const sg_op *op = f.m.ops[i];
        CHECK(op->group != NULL);
        if (sg_schema_kind_of(&op->schema) == SG_KIND_OUT) {
            outs++;
            CHECK(op->group->ops[SG_KIND_OUT] == op);
        }
    }
    for (uint32_t i = 0; i < f.m.ngroups; i++) with_out += f.m.groups[i]->ops[SG_KIND_OUT] != NULL;
    CHECK(outs == 659);
    CHECK(with_out == 659);
    CHECK(f.m.ngroups > 1500 && f.m.ngroups < 2000);
    done(&f);
}

int main(void) {
    test_key_variants();
    test_key_defaults_kwargs();
    test_key_dunder_tensor_options();
    test_key_mutable_inputs();
    test_key_views();
    test_key_namespaces();
    test_same_kind_twice();
    test_view_beside_functional();
    test_corpus();
    return check_result("test_group");
}
