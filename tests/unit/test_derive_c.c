/* test_derive_c.c: the C facts of sg_model_derive (gen/derive_c.c; docs/derive.md, "C facts"):
 * C names that never clash (parameters renamed by the documented rule, ops whose names meet
 * refused with SG-407, reserved op names with SG-408, names the library declares with SG-409),
 * the kernel the generator writes for
 * each op, and the keys an op has kernels for. */
#include "check.h"
#include "codegen.h"
#include "derive.h"
#include "model.h"

typedef struct fixture {
    sg_model    m;
    sg_diag     d;
    int         errors; /* validation's and derive's */
} fixture;

static void run(fixture *f, const char *yaml) {
    sg_model_init(&f->m);
    sg_diag_init(&f->d);
    sg_load_buffer(&f->m, "test.yaml", yaml, strlen(yaml), &f->d);
    CHECK(f->d.nerrors == 0);
    sg_model_group(&f->m, &f->d);
    f->errors = sg_validate(&f->m, &f->d);
    f->errors += sg_model_derive(&f->m, &f->d);
}

static const char *out(const fixture *f) { return f->d.out.data ? f->d.out.data : ""; }

static void done(fixture *f) {
    if (check_failures) fprintf(stderr, "%s", out(f));
    sg_diag_free(&f->d);
    sg_model_free(&f->m);
}

/* The op "name" or "name.overload", or NULL. */
static const sg_op *find(const sg_model *m, const char *full) {
    for (uint32_t i = 0; i < m->nops; i++) {
        const sg_schema *s = &m->ops[i]->schema;
        size_t n = strlen(s->name);
        if (!m->ops[i]->parsed || strncmp(full, s->name, n) != 0) continue;
        if ((!full[n] && !s->overload[0]) || (full[n] == '.' && strcmp(full + n + 1, s->overload) == 0))
            return m->ops[i];
    }
    return NULL;
}

/* The op's parameters' C names, arguments then returns, joined by spaces. */
static const char *params(const sg_model *m, const char *full) {
    static char buf[1024];
    const sg_op *op = find(m, full);
    if (!op || !op->c) return "(no such op, or no C facts)";
    buf[0] = '\0';
    for (uint32_t i = 0; i < op->schema.nargs + op->schema.nrets; i++) {
        const char *name = i < op->schema.nargs ? op->c->arg_cnames[i]
                                                 : op->c->ret_cnames[i - op->schema.nargs];
        if (i) strncat(buf, " ", sizeof buf - strlen(buf) - 1);
        strncat(buf, name, sizeof buf - strlen(buf) - 1);
    }
    return buf;
}

static void test_names(void) {
    fixture f;
    run(&f, "- func: my::g(Tensor self) -> (Tensor a, Tensor a)\n"
            "- func: my::k(Tensor ret) -> Tensor\n"
            "- func: my::r(Tensor ret0, Tensor ret_a) -> (Tensor, Tensor, Tensor a)\n"
            "- func: my::w(int int, int default, int _Bool, int __x, int _X, int sg_y, int SG_Z,"
            " int ks, int outs, int size_t, int INT64_MAX, int UINT8_C, int PTRDIFF_MIN, int bool,"
            " int NULL, int offsetof, int true, int static_assert, int my_g_op, int my_k,"
            " int my_k_redispatch, int int_, int sg_i, int st, int m, int FZ_H, int class, int new,"
            " int linux, int unix)"
            " -> ()\n");
    CHECK(f.errors == 0);
    CHECK_STR(params(&f.m, "g"), "self ret_a ret_a_");     /* two returns of one name */
    CHECK_STR(params(&f.m, "k"), "ret ret_");              /* an argument takes ret first */
    CHECK_STR(params(&f.m, "r"), "ret0 ret_a ret0_ ret1 ret_a_");
    CHECK_STR(params(&f.m, "w"),
              "int_ default_ arg__Bool arg___x arg__X arg_sg_y arg_SG_Z ks_ outs_ size_t_ "
              "INT64_MAX_ UINT8_C_ PTRDIFF_MIN_ bool_ NULL_ offsetof_ true_ static_assert_ "
              "my_g_op_ my_k_ my_k_redispatch_ int__ arg_sg_i st m FZ_H_ class_ new_ linux_ unix_");
    const sg_op *w = find(&f.m, "w");
    CHECK(w && w->c && strcmp(w->c->cname, "my_w") == 0);
    done(&f);
}

/* Names that are fine stay as written: the corpus's are all kept (its output is unchanged). */
static void test_names_kept(void) {
    fixture f;
    run(&f, "- func: my::t(Tensor self, *, int N, float eps=1e-5, Tensor(a!) out) -> Tensor(a!)\n"
            "- func: my::u(Tensor self) -> (Tensor values, Tensor indices)\n");
    CHECK(f.errors == 0);
    CHECK_STR(params(&f.m, "t"), "self N eps out ret");
    CHECK_STR(params(&f.m, "u"), "self ret_values ret_indices");
    done(&f);
}

static void test_op_collisions(void) {
    fixture f;
    const char *yaml = "- func: my::a_b(Tensor self) -> Tensor\n"
                       "- func: my::a.b(Tensor self) -> Tensor\n"
                       "- func: my::c(Tensor self) -> Tensor\n"
                       "- func: my::c.op(Tensor self) -> Tensor\n"
                       "- func: my::d_redispatch(Tensor self) -> Tensor\n"
                       "- func: my::d(Tensor self) -> Tensor\n"
                       /* the typed override's names, which the shard header declares too */
                       "- func: my::e.override(Tensor self) -> Tensor\n"
                       "- func: my::e(Tensor self) -> Tensor\n"
                       "- func: my::g_pred_fn(Tensor self) -> Tensor\n"
                       "- func: my::g(Tensor self) -> Tensor\n";
    run(&f, yaml);
    CHECK(f.errors == 5);
    CHECK(strstr(out(&f), "test.yaml:2:13: error: operator 'my::a.b' and operator 'my::a_b' "
                          "would both declare 'my_a_b' in the generated C") != NULL);
    CHECK(strstr(out(&f), "test.yaml:1:13: note: 'my::a_b' is defined here") != NULL);
    CHECK(strstr(out(&f), "test.yaml:4:13: error: operator 'my::c.op' and operator 'my::c' "
                          "would both declare 'my_c_op'") != NULL);
    CHECK(strstr(out(&f), "test.yaml:6:13: error: operator 'my::d' and operator "
                          "'my::d_redispatch' would both declare 'my_d_redispatch'") != NULL);
    CHECK(strstr(out(&f), "test.yaml:8:13: error: operator 'my::e' and operator "
                          "'my::e.override' would both declare 'my_e_override'") != NULL);
    CHECK(strstr(out(&f), "test.yaml:10:13: error: operator 'my::g' and operator "
                          "'my::g_pred_fn' would both declare 'my_g_pred_fn'") != NULL);
    CHECK(strstr(out(&f), "[SG-407]") != NULL);
    done(&f);

    run(&f, "- func: sg::foo(Tensor self) -> Tensor\n"
            "- func: __x::foo(Tensor self) -> Tensor\n"
            "- func: _Y::foo(Tensor self) -> Tensor\n"
            "- func: _y::foo(Tensor self) -> Tensor\n");
    CHECK(f.errors == 3);
    CHECK(strstr(out(&f), "test.yaml:1:13: error: operator 'sg::foo' would have the C name "
                          "'sg_foo', which is reserved") != NULL);
    CHECK(strstr(out(&f), "test.yaml:2:14: error: operator '__x::foo' would have the C name "
                          "'__x_foo'") != NULL);
    CHECK(strstr(out(&f), "test.yaml:3:13: error: operator '_Y::foo'") != NULL);
    CHECK(strstr(out(&f), "'_y::foo'") == NULL);
    CHECK(strstr(out(&f), "[SG-408]") != NULL);
    done(&f);
}

static void test_library_names(void) {
    fixture f;
    run(&f, "- func: fz::init(Tensor self) -> Tensor\n"
            "- func: FZ::H(Tensor self) -> Tensor\n"
            "- func: fz::boxed_t(Tensor self) -> Tensor\n"
            "- func: fz::over_t_t(Tensor self) -> Tensor\n"  /* a shard's override walk */
            "- func: fz::no(Tensor self) -> Tensor\n"    /* fz_no_ops is no name of its */
            "- func: fz::ok(Tensor self, int fz_ops, int my_nops) -> Tensor\n");
    CHECK(f.errors == 0);
    CHECK_STR(params(&f.m, "ok"), "self fz_ops_ my_nops_ ret");
    CHECK(sg_derive_check_lib(&f.m, "fz", &f.d) == 4);
    CHECK(strstr(out(&f), "test.yaml:1:13: error: operator 'fz::init' would declare 'fz_init', "
                          "which the generated library 'fz' declares itself; rename the operator "
                          "or choose another --lib [SG-409]") != NULL);
    CHECK(strstr(out(&f), "test.yaml:2:13: error: operator 'FZ::H' would declare 'FZ_H'") != NULL);
    CHECK(strstr(out(&f), "test.yaml:3:13: error: operator 'fz::boxed_t' would declare "
                          "'fz_boxed_t'") != NULL);
    CHECK(strstr(out(&f), "test.yaml:4:13: error: operator 'fz::over_t_t' would declare "
                          "'fz_over_t_t'") != NULL);
    CHECK(sg_derive_check_lib(&f.m, "other", &f.d) == 0);
    done(&f);
}

static const char *composite(const sg_model *m, const char *full) {
    const sg_op *op = find(m, full);
    return !op || !op->c ? "(none)" : op->c->composite ? op->c->composite : "-";
}

static void test_composite(void) {
    fixture f;
    run(&f, "- func: my::s.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
            "  structured: True\n"
            "  dispatch:\n    CPU: s_out\n"
            "- func: my::s(Tensor self) -> Tensor\n"
            "  structured_delegate: s.out\n"
            "- func: my::s_(Tensor(a!) self) -> Tensor(a!)\n"
            "  structured_delegate: s.out\n"
            "- func: my::f(Tensor self) -> Tensor\n"
            "  autogen: f.out\n"
            "  dispatch:\n    CPU, CUDA: f\n    CompositeExplicitAutograd: f2\n"
            "- func: my::i_(Tensor(a!) self) -> Tensor(a!)\n"
            "  autogen: i.out, i\n"
            "- func: my::v(Tensor self, ...) -> Tensor\n"
            "  structured_delegate: s.out\n");
    CHECK(f.errors == 0);
    CHECK_STR(composite(&f.m, "s"), "structured");
    CHECK_STR(composite(&f.m, "s_"), "structured");
    CHECK_STR(composite(&f.m, "s.out"), "-");
    CHECK_STR(composite(&f.m, "f.out"), "out");
    CHECK_STR(composite(&f.m, "i.out"), "out_inplace");
    CHECK_STR(composite(&f.m, "i"), "functional");
    CHECK_STR(composite(&f.m, "f"), "-");
    CHECK_STR(composite(&f.m, "v"), "-"); /* varargs: no typed API, so no kernel */

    const sg_op *op = find(&f.m, "f");
    CHECK(op && op->c && op->c->nkernel_keys == 3);
    if (op && op->c && op->c->nkernel_keys == 3) {
        CHECK_STR(op->c->kernel_keys[0], "CPU");
        CHECK_STR(op->c->kernel_keys[1], "CUDA");
        CHECK_STR(op->c->kernel_keys[2], "CompositeExplicitAutograd");
        CHECK(op->c->backend_kernel && op->c->composite_kernel && !op->c->implicit);
    }
    op = find(&f.m, "i_"); /* no dispatch, no delegate: CompositeImplicitAutograd */
    CHECK(op && op->c && op->c->implicit && op->c->nkernel_keys == 1 &&
          strcmp(op->c->kernel_keys[0], "CompositeImplicitAutograd") == 0 &&
          op->c->composite_kernel && !op->c->backend_kernel);
    op = find(&f.m, "s"); /* a delegate: no keys of its own, a backend's kernel */
    CHECK(op && op->c && !op->c->implicit && op->c->nkernel_keys == 0 && op->c->backend_kernel &&
          !op->c->composite_kernel);
    op = find(&f.m, "f.out"); /* derived: CompositeExplicitAutograd */
    CHECK(op && op->c && op->c->nkernel_keys == 1 && op->c->composite_kernel &&
          !op->c->backend_kernel);
    done(&f);
}

/* Where a composite kernel takes each argument of the op it calls (sg_op_c.callee_args): passed
 * on by name, the structured out op's out argument its own, the options an out variant drops
 * from its out argument or defaults; an argument it has no value for is SG-414. */
static void test_callee_args(void) {
    fixture f;
    run(&f, "- func: my::s.out(Tensor self, int y=1, *, Tensor(a!) out) -> Tensor(a!)\n"
            "  structured: True\n"
            "  dispatch:\n    CPU: s_out\n"
            "- func: my::s(Tensor self, int y=1) -> Tensor\n"
            "  structured_delegate: s.out\n"
            "- func: my::r(int n, *, ScalarType? dtype=None, Layout? layout=None, "
            "Device? device=None, bool? pin_memory=None) -> Tensor\n"
            "  autogen: r.out\n"
            "  dispatch:\n    CPU: r\n");
    CHECK(f.errors == 0);
    const sg_op *op = find(&f.m, "s");
    CHECK(op && op->c && op->c->callee_args);
    if (op && op->c && op->c->callee_args) {
        CHECK(op->c->callee_args[0].from == SG_CALL_ARG && op->c->callee_args[0].arg == 0);
        CHECK(op->c->callee_args[1].from == SG_CALL_ARG && op->c->callee_args[1].arg == 1);
        CHECK(op->c->callee_args[2].from == SG_CALL_OWN);
    }
    op = find(&f.m, "r.out"); /* r.out(int n, *, Tensor(a!) out): the options dropped */
    CHECK(op && op->c && op->c->callee_args && op->schema.nargs == 2);
    if (op && op->c && op->c->callee_args) {
        const sg_call_arg *c = op->c->callee_args;
        CHECK(c[0].from == SG_CALL_ARG && c[0].arg == 0);
        CHECK(c[1].from == SG_CALL_DTYPE_OF && c[1].arg == 1);
        CHECK(c[2].from == SG_CALL_NULL);
        CHECK(c[3].from == SG_CALL_DEVICE_OF && c[3].arg == 1);
        CHECK(c[4].from == SG_CALL_NULL); /* pin_memory is optional here */
    }
    done(&f);

    run(&f, "- func: my::t.out(Tensor self, int y, *, Tensor(a!) out) -> Tensor(a!)\n"
            "  structured: True\n"
            "- func: my::t(Tensor self) -> Tensor\n"
            "  structured_delegate: t.out\n");
    CHECK(f.errors == 1);
    CHECK(strstr(out(&f), "test.yaml:3:13: error: the kernel generated for 'my::t' calls "
                          "'my::t.out', whose argument 'y' it has no value for [SG-414]") != NULL);
    op = find(&f.m, "t");
    CHECK(op && op->c && !op->c->composite);
    done(&f);
}

/* A custom op may name two arguments alike (c10 accepts it; validation holds aten to
 * torchgen's rule): they get two C names, and a structured kernel passes the nth of each
 * name on to the nth of its out op's. Validation is left out here, as it refuses such names
 * in every namespace today. */
static void test_duplicate_names(void) {
    const char *yaml = "- func: my::f.out(Tensor x, Tensor x, *, Tensor(a!) out) -> Tensor(a!)\n"
                       "  structured: True\n"
                       "  dispatch:\n    CPU: f_out\n"
                       "- func: my::f(Tensor x, Tensor x) -> Tensor\n"
                       "  structured_delegate: f.out\n";
    sg_model m;
    sg_diag  d;
    sg_model_init(&m);
    sg_diag_init(&d);
    sg_load_buffer(&m, "test.yaml", yaml, strlen(yaml), &d);
    sg_model_group(&m, &d);
    CHECK(sg_model_derive(&m, &d) == 0);
    CHECK_STR(params(&m, "f"), "x x_ ret");
    sg_outputs      outs = {0};
    const char     *inputs[1] = {"test.yaml"};
    sg_codegen_opts o = {.lib = "t", .shards = 1, .inputs = inputs, .ninputs = 1, .threads = 1};
    CHECK(sg_codegen(&m, &o, &outs, &d) == 0);
    bool found = false;
    for (uint32_t i = 0; i < outs.n; i++) {
        if (strcmp(outs.items[i].name, "t_0.c") != 0) continue;
        const sg_buf *t = &outs.items[i].text;
        sg_buf        b = {0};
        sg_buf_init(&b);
        sg_buf_putn(&b, t->data ? t->data : "", t->len);
        found = true;
        CHECK(b.data && strstr(b.data, "sg_status my_f_composite(sg_keyset sg_ks, sg_tensor *x, "
                                       "sg_tensor *x_, sg_tensor **ret)") != NULL);
        CHECK(b.data && strstr(b.data, "sg_mf(x, x_, sg_m)") != NULL);
        CHECK(b.data && strstr(b.data, "my_f_out_redispatch(sg_ks, x, x_, sg_o[0], &sg_r[0])") != NULL);
        sg_buf_free(&b);
    }
    CHECK(found);
    if (check_failures) fprintf(stderr, "%.*s", (int)d.out.len, d.out.data ? d.out.data : "");
    sg_outputs_free(&outs);
    sg_diag_free(&d);
    sg_model_free(&m);
}

/* Signature strings and adapter names, from the type table's letters. */
static void test_signatures(void) {
    fixture f;
    run(&f, "- func: my::s(Tensor self, Tensor? w, int[2] k, int[]? d, Scalar a, str m) -> Tensor\n"
            "- func: my::t(Tensor[] xs, float? e, bool[3] b) -> (Tensor[], int)\n"
            "- func: my::u(Tensor self, int[3] k) -> ()\n");
    const sg_op *s = find(&f.m, "s"), *t = find(&f.m, "t"), *u = find(&f.m, "u");
    CHECK(s && s->c && t && t->c && u && u->c);
    if (s && s->c) {
        CHECK_STR(s->c->signature, "tTnNSs>t");
        CHECK_STR(s->c->boxed_name, "boxed_tTn2NSs_t");
    }
    if (t && t->c) {
        CHECK_STR(t->c->signature, "lFk>li");
        CHECK_STR(t->c->boxed_name, "boxed_lFk_li");
    }
    if (u && u->c) CHECK_STR(u->c->boxed_name, "boxed_tn3_");
    done(&f);
}

int main(void) {
    test_names();
    test_names_kept();
    test_op_collisions();
    test_library_names();
    test_composite();
    test_callee_args();
    test_duplicate_names();
    test_signatures();
    return check_result("test_derive_c");
}
