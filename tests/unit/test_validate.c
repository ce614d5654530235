/* test_validate.c: the rules of docs/rules.md (gen/validate*.c).
 *
 * Each rule has at least one schema file that breaks it, checked for the number of errors,
 * the message and its line:col as rendered through sg_diag, and a neighbour that keeps it.
 * PyTorch's own native_functions.yaml must come out clean: it is torchgen-valid, so any
 * error on it would be a false positive of ours.
 */
#include "check.h"
#include "model.h"

/* The tags the cases use, as a tags.yaml. */
static const char tags_yaml[] =
    "- tag: core\n  desc: core operators\n"
    "- tag: nondeterministic_seeded\n  desc: random\n"
    "- tag: view_copy\n  desc: copies of views\n"
    "- tag: inplace_view\n  desc: in-place views\n";

typedef struct fixture {
    sg_model m;
    sg_diag  d;
} fixture;

static void run(fixture *f, const char *yaml, bool with_tags) {
    sg_model_init(&f->m);
    sg_diag_init(&f->d);
    f->d.max_errors = 0;
    if (with_tags) sg_load_buffer(&f->m, "tags.yaml", tags_yaml, strlen(tags_yaml), &f->d);
    sg_load_buffer(&f->m, "test.yaml", yaml, strlen(yaml), &f->d);
    sg_model_group(&f->m, &f->d);
    sg_validate(&f->m, &f->d);
}

static void done(fixture *f) {
    sg_diag_free(&f->d);
    sg_model_free(&f->m);
}

static const char *out(const fixture *f) { return f->d.out.data ? f->d.out.data : ""; }

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

/* Whether out holds a diagnostic "file:line:col: sev: ..." whose message holds msg, with col
 * where `at` first appears on that line of src. */
static bool has_diag(const char *diags, const char *file, const char *src, int line,
                     const char *at, const char *sev, const char *msg) {
    char head[128], text[256];
    snprintf(head, sizeof head, "%s:%d:%d: %s: ", file, line, column(src, line, at), sev);
    /* "words [SG-123]": the words and the rule's ID, each somewhere in the message */
    const char *id = strstr(msg, " [SG-");
    snprintf(text, sizeof text, "%.*s", id ? (int)(id - msg) : (int)strlen(msg), msg);
    for (const char *p = diags; (p = strstr(p, head)); p++) {
        const char *end = strchr(p, '\n');
        const char *m = strstr(p, text), *i = id ? strstr(p, id + 1) : p;
        if (m && i && (!end || (m < end && i < end))) return true;
    }
    return false;
}

/* A schema file that breaks a rule: its error count, and one of its errors, located. */
typedef struct bad_case {
    const char *yaml;
    unsigned    nerrors;
    int         line;
    const char *at;  /* the text under the caret, first found on `line` */
    const char *msg; /* part of the message */
} bad_case;

static bool check_bad(const bad_case *c) {
    fixture f;
    run(&f, c->yaml, true);
    bool ok = f.d.nerrors == c->nerrors &&
              has_diag(out(&f), "test.yaml", c->yaml, c->line, c->at, "error", c->msg);
    if (!ok)
        fprintf(stderr, "case:\n%s\nexpected %u error(s), %d:%d '%s'; got %u:\n%s\n", c->yaml,
                c->nerrors, c->line, column(c->yaml, c->line, c->at), c->msg, f.d.nerrors, out(&f));
    done(&f);
    return ok;
}

static bool check_good(const char *yaml) {
    fixture f;
    run(&f, yaml, true);
    bool ok = f.d.nerrors == 0;
    if (!ok) fprintf(stderr, "case:\n%s\nexpected no error, got:\n%s\n", yaml, out(&f));
    done(&f);
    return ok;
}

/* ---- the cases: one or more per rule, each with a neighbour that keeps the rule ---------- */

static const bad_case bad[] = {
    /* SG-001 argument names (aten; a warning elsewhere, test_custom_ops) */
    {"- func: f(Tensor x, int x) -> Tensor\n", 1, 1, "x)", "argument name 'x' is used twice"},
    {"- func: aten::f(Tensor x, *, Tensor(a!) x) -> Tensor(a!)\n", 1, 1, "x)", "used twice"},
    /* SG-102 annotations on types other than Tensor, in aten */
    {"- func: f(Tensor self, *, int(a!) n) -> ()\n", 1, 1, "(a!) n", "annotation only on Tensor"},
    /* SG-002 an operator defined twice */
    {"- func: my_ops::k(Tensor x) -> Tensor\n- func: my_ops::k(Tensor y) -> Tensor\n", 1, 2, "k(",
     "operator 'my_ops::k' is defined twice [SG-002]"},
    {"- func: f.a(Tensor self) -> Tensor\n- func: aten::f.a(Tensor self) -> Tensor\n", 2, 2, "f.a",
     "operator 'aten::f.a' is defined twice"},
    /* SG-101 types */
    {"- func: f(Tensor self, Any x) -> Tensor\n", 1, 1, "Any", "type 'Any' is not one torchgen knows"},
    {"- func: f(Tensor self) -> Dict(str, Tensor)\n", 1, 1, "Dict", "type 'Dict(str, Tensor)'"},
    /* SG-102 annotations */
    {"- func: f(Tensor(ab) self) -> Tensor\n", 1, 1, "(ab)", "single lower-case letters"},
    {"- func: f(Tensor! self) -> Tensor\n", 1, 1, "!", "does not accept 'Tensor!'"},
    {"- func: f(Tensor[](a) self) -> Tensor\n", 1, 1, "(a)", "annotation only on Tensor"},
    {"- func: f(Tensor(a|b!) self) -> Tensor\n", 1, 1, "(a|b!)", "names one set"},
    /* SG-103 what torchgen cannot print back */
    {"- func: f(Tensor self, *) -> Tensor\n", 1, 1, "*", "'*' with no keyword-only argument"},
    {"- func: f(Tensor self) -> (Tensor)\n", 1, 1, "Tensor)", "single return without parentheses"},
    {"- func: f(Tensor self, int[0] x) -> Tensor\n", 1, 1, "int[0]", "list type of size 0"},
    {"- func: f(Tensor self, ...) -> Tensor\n", 1, 1, "...", "'...' (varargs)"},
    /* SG-104 operator names */
    {"- func: f_out(Tensor self) -> Tensor\n", 1, 1, "f_out", "ends in '_out'"},
    {"- func: __iabs__(Tensor self) -> Tensor\n", 1, 1, "__iabs__", "dunder name starting with 'i'"},
    {"- func: f_functional_(Tensor(a!) self) -> Tensor(a!)\n", 1, 1, "f_functional_", "'_functional'"},
    {"- func: f_(Tensor(a!) self) -> Tensor(a!)\n  autogen: g_out\n", 1, 2, "g_out",
     "autogen name 'g_out' ends in '_out'"},
    /* SG-105 out arguments last */
    {"- func: f.out(Tensor self, *, Tensor(a!) out, int x=0) -> Tensor(a!)\n", 1, 1, "int x",
     "keyword-only argument 'x' follows out argument 'out'"},
    /* SG-106 no written argument before self */
    {"- func: f(Tensor(a!) x, Tensor self) -> ()\n", 1, 1, "Tensor(a!) x", "comes before 'self'"},
    /* SG-107 in-place with out arguments (and SG-108: its return is self's, not out's) */
    {"- func: f_.o(Tensor(a!) self, *, Tensor(b!) out) -> Tensor(a!)\n", 2, 1, "Tensor(b!) out",
     "in-place operator 'f_' cannot also have out argument 'out' [SG-107]"},
    /* SG-108 i-th return, i-th out argument */
    {"- func: f.out(Tensor self, *, Tensor(a!) a, Tensor(b!) b) -> (Tensor(b!), Tensor(a!))\n", 1, 1,
     "Tensor(b!),", "return 1 has (b!) but out argument 1, 'a', has (a!) [SG-108]"},
    /* SG-109 written positional returned (SG-111 too: it is not an out argument) */
    {"- func: f(Tensor self, Tensor(a!) buf) -> Tensor(a!)\n", 2, 1, "Tensor(a!)\n",
     "aliases written positional argument 'buf' [SG-109]"},
    /* SG-110 mixed returns (SG-114 too: in-place returns self alone) */
    {"- func: f_(Tensor(a!) self) -> (Tensor(a!), Tensor)\n", 2, 1, "Tensor)",
     "return 2 is not written but return 1 is written [SG-110]"},
    /* SG-111 written return aliases nothing it may */
    {"- func: f(Tensor(a!) self) -> Tensor(b!)\n", 1, 1, "Tensor(b!)",
     "written return 1 aliases no out argument and not 'self' [SG-111]"},
    /* SG-112 tensor-list out arguments: no returns (SG-108 too) */
    {"- func: f.out(Tensor self, *, Tensor(a!)[] out) -> Tensor\n", 2, 1, "Tensor\n",
     "out argument 'out' is not a plain Tensor, so the operator returns nothing [SG-112]"},
    /* SG-113 one return per out argument */
    {"- func: f.out(Tensor self, *, Tensor(a!) out) -> ()\n", 1, 1, "-> ()",
     "0 returns for 1 out argument [SG-113]"},
    /* SG-114 in-place operators */
    {"- func: f_(Tensor self) -> Tensor\n", 1, 1, "Tensor self", "must write 'self'"},
    {"- func: f_(Tensor(a!) self) -> ()\n", 1, 1, "-> ()", "must return 'self'"},
    {"- func: f_(Tensor(a!)[] self) -> Tensor\n", 1, 1, "Tensor\n", "returns nothing: write '-> ()'"},
    {"- func: f_(int x) -> ()\n", 1, 1, "f_", "needs a 'self' argument"},
    /* SG-115 TensorOptions */
    {"- func: f_(Tensor(a!) self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
     "device=None, bool? pin_memory=None) -> Tensor(a!)\n", 1, 1, "ScalarType?",
     "allowed only on functional operators; this one is inplace [SG-115]"},
    /* SG-116 'functional' overloads */
    {"- func: f.functional(Tensor(a!) self, Tensor(b!) x) -> ()\n", 1, 1, "functional(",
     "overload name 'functional' contains 'functional'"},
    /* SG-117 a return aliasing two inputs */
    {"- func: f(Tensor(a) self, Tensor(a) other) -> Tensor(a)\n", 1, 1, "Tensor(a)\n",
     "return 1 aliases two inputs, 'self' and 'other' [SG-117]"},
    /* SG-118 Python keywords */
    {"- func: f(Tensor self, int from) -> Tensor\n", 1, 1, "from", "'from' is a Python keyword"},
    /* SG-202 device_check values */
    {"- func: f(Tensor self) -> Tensor\n  device_check: Maybe\n", 1, 2, "Maybe",
     "device_check is NoCheck or ExactSame"},
    /* SG-203 no namespace in structured_delegate / structured_inherits */
    {"- func: f(Tensor self) -> Tensor\n  structured_delegate: aten::f.out\n", 1, 2, "aten::",
     "structured_delegate cannot name a namespace"},
    /* SG-204 python_module and methods */
    {"- func: f(Tensor self) -> Tensor\n  python_module: nn\n  variants: function, method\n", 1, 3,
     "function, method", "python_module cannot be a method"},
    /* SG-205 precomputed needs structured */
    {"- func: f(Tensor self, int dim) -> Tensor\n  precomputed:\n  - dim -> int d\n", 1, 3, "- dim",
     "precomputed needs 'structured: True'"},
    /* SG-206 precomputed lines */
    {"- func: f(Tensor self, int dim) -> Tensor\n  structured_delegate: f.out\n"
     "- func: f.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
     "  precomputed:\n  - int extra\n  - dim -> int D, int ok\n  dispatch:\n    CPU: f_out\n",
     2, 6, "int extra", "only the last precomputed line may add parameters"},
    {"- func: f(Tensor self, int dim) -> Tensor\n  structured_delegate: f.out\n"
     "- func: f.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
     "  precomputed:\n  - dim -> int D, int ok\n  dispatch:\n    CPU: f_out\n",
     1, 6, "int D", "precomputed parameter 'D' is all capitals"},
    /* SG-207 tags known (a tags file was given) */
    {"- func: f(Tensor self) -> Tensor\n  tags: [core, bogus]\n", 1, 2, "bogus", "unknown tag 'bogus'"},
    /* SG-208 manual registration and dispatch */
    {"- func: f(Tensor self) -> Tensor\n  manual_kernel_registration: True\n  dispatch:\n"
     "    CPU: f\n", 1, 2, "True", "manual_kernel_registration and a dispatch table"},
    /* SG-209 dispatch keys */
    {"- func: f(Tensor self) -> Tensor\n  dispatch:\n    CPU, CUDU: f\n", 1, 3, "CUDU",
     "unknown dispatch key 'CUDU'"},
    {"- func: f(Tensor self) -> Tensor\n  dispatch:\n    AutogradCPU: f\n", 1, 3, "AutogradCPU",
     "dispatch key 'AutogradCPU' cannot be used"},
    /* ... in every namespace: a custom op's key must exist too (which ones it may use is c10's
     * wider rule: PrivateUse1 passes, among the good cases) */
    {"- func: my_ops::f(Tensor self) -> Tensor\n  dispatch:\n    CPUU: f\n", 1, 3, "CPUU",
     "unknown dispatch key 'CPUU'"},
    /* SG-210 a key given twice in one table (every namespace) */
    {"- func: my_ops::f(Tensor self) -> Tensor\n  dispatch:\n    CPU, CUDA: f\n    CPU: g\n", 1, 4,
     "CPU", "dispatch key 'CPU' is given twice in one dispatch table"},
    /* ... in a table of more keys than are scanned (they are hashed) */
    {"- func: my_ops::f(Tensor self) -> Tensor\n  dispatch:\n    CPU, CUDA, MPS, XPU, MTIA, HPU, "
     "Meta, MkldnnCPU, SparseCPU, SparseCUDA, SparseMPS, SparseXPU, SparseMeta, SparseCsrCPU, "
     "SparseCsrCUDA, SparseCsrMPS, SparseCsrXPU: f\n    SparseMeta: g\n", 1, 4, "SparseMeta",
     "dispatch key 'SparseMeta' is given twice in one dispatch table"},
    /* SG-211, SG-212 a sole CompositeImplicitAutograd entry */
    {"- func: f(Tensor self) -> Tensor\n  dispatch:\n    CompositeImplicitAutograd: f\n", 1, 3,
     "Composite", "says what having none says"},
    {"- func: f(Tensor self) -> Tensor\n  dispatch:\n    CompositeImplicitAutograd: f_impl\n", 1, 3,
     "Composite", "must be named 'f', not 'f_impl'"},
    /* SG-213 factories need a dispatch table */
    {"- func: new_f(Tensor self) -> Tensor\n", 1, 1, "new_f", "factory function 'new_f'"},
    {"- func: f(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
     "bool? pin_memory=None) -> Tensor\n", 1, 1, "f(", "factory function 'f'"},
    /* SG-214 one composite key */
    {"- func: f(Tensor self) -> Tensor\n  dispatch:\n    CompositeExplicitAutograd: f\n"
     "    CompositeImplicitAutograd: g\n", 1, 4, "Composite", "more than one composite kernel"},
    /* SG-215 ufunc_inner_loop */
    {"- func: f(Tensor self) -> Tensor\n  structured_delegate: f.out\n"
     "- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
     "  ufunc_inner_loop:\n    Generic: f (AllAndComplex)\n    Vector: f (Bool)\n"
     "  dispatch:\n    CPU: f_out\n", 2, 7, "Vector", "unknown ufunc key 'Vector'"},
    {"- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
     "  ufunc_inner_loop:\n    Generic: f (AllAndComplex)\n", 1, 3, "Generic",
     "ufunc_inner_loop needs 'structured: True'"},
    /* SG-216 structured_delegate and backend kernels */
    {"- func: f(Tensor self) -> Tensor\n  structured_delegate: f.out\n  dispatch:\n    CPU: f\n"
     "- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
     "  dispatch:\n    CPU: f_out\n", 1, 4, "CPU", "takes its CPU kernel from its delegate"},
    /* SG-217 const refs for out operators */
    {"- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
     "  use_const_ref_for_mutable_tensors: True\n", 1, 2, "True", "use_const_ref_for_mutable_tensors"},
    /* SG-218 out operators are functions only */
    {"- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  variants: method\n", 1, 2,
     "method", "must have 'variants: function' only"},
    /* SG-219 structured goes on the out variant */
    {"- func: f(Tensor self) -> Tensor\n  structured: True\n  dispatch:\n    CPU: f\n", 1, 2, "True",
     "'structured' belongs on the out variant"},
    /* SG-220 an out operator does not delegate */
    {"- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured_delegate: g.out\n"
     "- func: g.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n", 2, 2,
     "g.out", "an out operator cannot have a structured_delegate"},
    /* SG-221 structured and delegate; structured_inherits */
    {"- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured_inherits: Base\n", 1, 2,
     "Base", "structured_inherits needs 'structured: True'"},
    /* SG-222 cpp_no_default_args */
    {"- func: f(Tensor self, int x=1) -> Tensor\n  cpp_no_default_args: [self, x]\n", 1, 2, "self",
     "names 'self', which is an argument without a default"},
    /* SG-223 _foreach operators */
    {"- func: _foreach_f(Tensor[] self) -> Tensor[]\n  dispatch:\n    CPU: f\n", 1, 1, "_foreach_f",
     "need 'device_check: NoCheck'"},
    /* SG-224 nondeterministic_seeded */
    {"- func: f_rand(Tensor self) -> Tensor\n  dispatch:\n    CPU: f\n", 1, 1, "f_rand",
     "needs the tag nondeterministic_seeded"},
    {"- func: f(Tensor self, *, Generator? generator=None) -> Tensor\n  dispatch:\n    CPU: f\n", 1, 1,
     "f(", "needs the tag nondeterministic_seeded"},
    /* SG-301 one operator per signature and kind */
    {"- func: f(Tensor self) -> Tensor\n- func: f.again(Tensor self) -> Tensor\n", 1, 2, "f.again",
     "'f.again' is a second functional variant of signature 'aten::f(Tensor self) -> Tensor'"},
    /* SG-302 a structured group agrees */
    {"- func: f(Tensor self) -> Tensor\n  dispatch:\n    CPU: f\n"
     "- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
     "  dispatch:\n    CPU: f_out\n", 1, 1, "f(",
     "'f' is a variant of structured 'f.out' and must say 'structured_delegate: f.out'"},
    /* SG-303 the functional variant of a mutable operator */
    {"- func: f(Tensor self, Tensor(a!) buf) -> Tensor\n  dispatch:\n    CPU: f\n"
     "- func: f.func(Tensor self, Tensor buf) -> (Tensor, Tensor)\n  dispatch:\n    CPU: ff\n"
     "- func: f.out(Tensor self, Tensor(a!) buf, *, Tensor(b!) out) -> Tensor(b!)\n  dispatch:\n"
     "    CPU: fo\n", 1, 4, "f.func", "must end in '_functional' ('f_functional')"},
    /* SG-304 structured groups delegate to their out variant */
    {"- func: f(Tensor self) -> Tensor\n  structured_delegate: g.out\n"
     "- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
     "  dispatch:\n    CPU: f_out\n"
     "- func: g(Tensor self, int x) -> Tensor\n  structured_delegate: g.out\n"
     "- func: g.out(Tensor self, int x, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
     "  dispatch:\n    CPU: g_out\n", 1, 2, "g.out",
     "structured_delegate is 'g.out', but this operator's out variant is 'f.out'"},
    /* SG-305 a structured out operator needs its functional variant */
    {"- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
     "  dispatch:\n    CPU: f_out\n", 1, 1, "f.out", "structured operator 'f.out' has no functional"},
    /* SG-306 autogen lists what torchgen generates */
    {"- func: f(Tensor self) -> Tensor\n  dispatch:\n    CPU: f\n  autogen: f.out\n"
     "- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: f_out\n",
     1, 4, "f.out", "autogen lists 'f.out', but torchgen generates nothing"},
    {"- func: f_(Tensor(a!) self) -> Tensor(a!)\n  dispatch:\n    CPU: f_\n"
     "- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: f_out\n",
     1, 1, "f_", "torchgen generates 'f' for this operator's group; say so with 'autogen: f'"},
    {"- func: f_(Tensor(a!) self) -> Tensor(a!)\n  dispatch:\n    CPU: f_\n  autogen: f.out\n", 1, 4,
     "f.out", "autogen lists 'f.out', but torchgen generates 'f, f.out'"},
    /* SG-307 views and their copies */
    {"- func: v(Tensor(a) self, int d) -> Tensor(a)\n  dispatch:\n    CPU: v\n", 1, 1, "v(",
     "needs a copy variant 'v_copy'"},
    {"- func: v(Tensor(a) self) -> Tensor(a)\n  dispatch:\n    CPU: v\n"
     "- func: v_copy(Tensor self) -> Tensor\n  dispatch:\n    CPU: vc\n", 1, 4, "v_copy",
     "needs the tag view_copy"},
    {"- func: v(Tensor(a) self) -> Tensor(a)\n"
     "- func: v_(Tensor(a!) self) -> Tensor(a!)\n  tags: inplace_view\n  dispatch:\n    CPU: v_\n",
     1, 2, "v_", "view 'v' has a CompositeImplicitAutograd kernel, so its in-place variant 'v_'"},
    /* SG-308 the delegate exists and is structured */
    {"- func: f(Tensor self) -> Tensor\n  structured_delegate: nowhere.out\n", 1, 2, "nowhere",
     "structured_delegate 'nowhere.out' names no operator"},
    /* SG-309 inplace_view */
    {"- func: f_(Tensor(a!) self) -> Tensor(a!)\n  tags: inplace_view\n  dispatch:\n    CPU: f_\n",
     1, 1, "f_", "there is no out-of-place view 'f'"},
    {"- func: f(Tensor(a!) self) -> Tensor(a!)\n  tags: inplace_view\n  dispatch:\n    CPU: f\n",
     1, 1, "f(", "tagged inplace_view but is not in-place"},
    {"- func: f(Tensor(a) self) -> Tensor(a)\n"
     "- func: f_(Tensor(a!) self, Tensor(b) other) -> Tensor(b)\n  dispatch:\n    CPU: f_\n",
     2, 2, "f_", "in-place operator 'f_' aliases an input"},
};

/* Neighbours: each keeps the rule its bad case above breaks. */
static const char *const good[] = {
    /* PyTorch accepts these in a TORCH_LIBRARY def: a custom namespace takes them all */
    "- func: my_ops::foo(Tensor(a!) x) -> ()\n"
    "- func: my_ops::g(Tensor! x) -> Tensor\n"
    "- func: my_ops::h(Any x, ...) -> ...\n"
    "- func: my_ops::k(Tensor x, *) -> (Tensor)\n"
    "- func: my_ops::sample_out(Tensor(a) x, Tensor(a) y) -> Tensor(a)\n"
    "- func: my_ops::t(Tensor(a -> *) x, Dict(str, Tensor) d, t z) -> Tensor(a)[]\n"
    "- func: my_ops::w_(Tensor x, int from) -> Tensor(b!)\n"
    "- func: my_ops::w_.out(Tensor x, *, Tensor(a!) out, int later=0) -> ()\n"
    "  dispatch:\n    PrivateUse1: w\n",
    "- func: my_ops::f(Tensor x, int y) -> Tensor\n- func: my_ops::f.y(Tensor y) -> Tensor\n"
    "- func: f(Tensor self) -> Tensor\n- func: aten::g(Tensor self) -> Tensor\n",
    "- func: f(Tensor self, Dimname d, SymInt[2] s, Tensor?[] t, int[1]? o, "
    "__torch__.torch.classes.q.Packed p) -> Tensor\n",
    "- func: f(Tensor(a -> *) self, Tensor(b!)[] rest, Tensor(c)? maybe) -> Tensor(a)[]\n",
    "- func: f(Tensor self, *, int x) -> Tensor\n- func: g(Tensor self) -> (Tensor a, Tensor b)\n"
    "- func: h(Tensor self, int[1] x) -> Tensor values\n",
    "- func: f.out_of_range(Tensor self) -> Tensor\n- func: __iand__(Tensor(a!) self, Tensor other) "
    "-> Tensor(a!)\n- func: g_functional(Tensor self) -> Tensor\n",
    "- func: f.out(Tensor self, *, Tensor(a!) out, Tensor(b!) two) -> (Tensor(a!), Tensor(b!))\n",
    "- func: f(Tensor self, Tensor(a!) x) -> ()\n- func: g_(Tensor(a!) self, Tensor(b!) x) -> Tensor(a!)\n",
    "- func: f.out(Tensor self, *, Tensor(a!)[] out) -> ()\n"
    "- func: g.out(Tensor self, *, Tensor(a!) out, Tensor(b!) _scratch_x) -> Tensor(a!)\n"
    "  dispatch:\n    CPU: g_out\n",
    "- func: f_(Tensor(a!)[] self) -> ()\n- func: g_(Tensor(a!) self, Tensor other) -> Tensor(a!)\n",
    "- func: f.functional(Tensor self) -> Tensor\n- func: g(Tensor(a) self, Tensor(b) other) -> "
    "Tensor(a)\n",
    "- func: uniform_(Tensor(a!) self, float from=0, float to=1, *, Generator? generator=None) -> "
    "Tensor(a!)\n  tags: nondeterministic_seeded\n  dispatch:\n    CPU: uniform_\n",
    "- func: f(Tensor self) -> Tensor\n  device_check: NoCheck\n  python_module: nn\n"
    "  variants: function\n  tags: core\n",
    "- func: f(Tensor self, int dim=0) -> Tensor\n  structured_delegate: f.out\n  dispatch:\n"
    "    SparseCPU: f_sparse\n    CompositeImplicitAutogradNestedTensor: f_nt\n"
    "- func: f_(Tensor(a!) self, int dim=0) -> Tensor(a!)\n  structured_delegate: f.out\n"
    "- func: f.out(Tensor self, int dim=0, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
    "  structured_inherits: TensorIteratorBase\n  precomputed:\n  - dim -> int dim, bool flag\n"
    "  - int extra\n  ufunc_inner_loop:\n    Generic: f (AllAndComplex, BFloat16)\n"
    "    ScalarOnly: f (Bool)\n  dispatch:\n    MPS: f_mps\n    MTIA: f_mtia\n",
    "- func: f(Tensor self) -> Tensor\n  dispatch:\n    CompositeImplicitAutograd: f_symint\n"
    "- func: g(Tensor self) -> Tensor\n  manual_kernel_registration: True\n"
    "- func: new_h(Tensor self) -> Tensor\n  dispatch:\n    CompositeExplicitAutograd: new_h\n"
    "- func: i(Tensor self) -> Tensor\n  dispatch:\n    CompositeImplicitAutograd: i\n    CPU: i_cpu\n",
    "- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  variants: function\n"
    "- func: f(Tensor self) -> Tensor\n  use_const_ref_for_mutable_tensors: True\n"
    "  cpp_no_default_args: []\n",
    "- func: _foreach_f(Tensor[] self) -> Tensor[]\n  device_check: NoCheck\n  dispatch:\n    CPU: f\n"
    "- func: _cudnn_init_dropout_state(float dropout) -> Tensor\n  dispatch:\n    CUDA: f\n"
    "- func: g_dropout_backward(Tensor self, float dropout) -> Tensor\n  dispatch:\n    CPU: g\n",
    /* groups: written variants need no autogen; autogen that names what is generated */
    "- func: f(Tensor self) -> Tensor\n  dispatch:\n    CPU: f\n"
    "- func: f_(Tensor(a!) self) -> Tensor(a!)\n  dispatch:\n    CPU: f_\n"
    "- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: f_out\n"
    "- func: g_(Tensor(a!) self) -> Tensor(a!)\n  dispatch:\n    CPU: g_\n  autogen: g, g.out\n"
    "- func: h(Tensor self, Tensor(a!) buf) -> Tensor\n  dispatch:\n    CPU: h\n"
    "  autogen: h_functional, h.out\n",
    /* views: a copy tagged view_copy, composite views, in-place views that agree */
    "- func: v(Tensor(a) self) -> Tensor(a)\n  dispatch:\n    CPU: v\n"
    "- func: v_(Tensor(a!) self) -> Tensor(a!)\n  tags: inplace_view\n  dispatch:\n    CPU: v_\n"
    "- func: v_copy(Tensor self) -> Tensor\n  tags: view_copy\n  dispatch:\n    CPU: vc\n"
    "- func: w(Tensor(a) self, int d) -> Tensor(a)\n"
    "- func: x_inverse(Tensor(a) self, int d) -> Tensor(a)\n  dispatch:\n    CPU: x\n"
    "- func: resize_(Tensor(a!) self, SymInt[] size) -> Tensor(a!)\n  tags: inplace_view\n"
    "  dispatch:\n    CPU: resize_\n",
};

static void test_rules(void) {
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            CHECK(check_bad(&bad[i]));
    }
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) CHECK(check_good(good[i]));
}

/* Outside aten, what c10 accepts and torchgen does not is a warning, located, and the op
 * keeps both names as written. */
static void test_custom_ops(void) {
    const char *yaml = "- func: my_ops::f(Tensor x, int x, *, Tensor x) -> Tensor\n"
                       "- func: my_ops::g(Tensor self, int(a!) n, str! s, int[](b) l) -> ()\n"
                       "- func: my_ops::h(Tensor(a!) self, Tensor(b)[] t) -> Tensor(a!)\n";
    fixture f;
    run(&f, yaml, true);
    CHECK(f.d.nerrors == 0 && f.d.nwarnings == 5);
    CHECK(has_diag(out(&f), "test.yaml", yaml, 1, "x)", "warning",
                   "argument name 'x' is used twice in 'f'; PyTorch accepts this outside aten"));
    CHECK(has_diag(out(&f), "test.yaml", yaml, 1, "x, int", "note", "first used here"));
    CHECK(has_diag(out(&f), "test.yaml", yaml, 2, "(a!)", "warning",
                   "alias annotation on type 'int', which is not a Tensor [SG-102]"));
    CHECK(has_diag(out(&f), "test.yaml", yaml, 2, "! s", "warning", "on type 'str'"));
    CHECK(has_diag(out(&f), "test.yaml", yaml, 2, "(b)", "warning", "on type 'int[]'"));
    CHECK(f.m.nops == 3 && f.m.ops[0]->schema.nargs == 3);
    if (f.m.nops == 3) {
        CHECK_STR(f.m.ops[0]->schema.args[1].name, "x");
        CHECK_STR(f.m.ops[0]->schema.args[2].name, "x");
    }
    done(&f);
}

/* Notes point at the first of two: the first definition, the first dispatch key. */
static void test_notes(void) {
    const char *yaml = "- func: f(Tensor self) -> Tensor\n  dispatch:\n    CPU: f\n"
                       "- func: f(Tensor self) -> Tensor\n  dispatch:\n    CPU: f\n    CUDA, CPU: g\n";
    fixture f;
    run(&f, yaml, false);
    CHECK(has_diag(out(&f), "test.yaml", yaml, 4, "f(", "error", "defined twice"));
    CHECK(has_diag(out(&f), "test.yaml", yaml, 1, "f(", "note", "first defined here"));
    CHECK(has_diag(out(&f), "test.yaml", yaml, 7, "CPU", "error", "given twice"));
    CHECK(has_diag(out(&f), "test.yaml", yaml, 6, "CPU", "note", "first given here"));
    done(&f);
}

/* One run reports every error, from every rule family, not the first alone. */
static void test_many_errors(void) {
    const char *yaml = "- func: a_out(Tensor self, Any x) -> Tensor\n"
                       "  device_check: Sometimes\n"
                       "- func: b_(Tensor self) -> Tensor\n"
                       "  dispatch:\n    CPUX: b_\n"
                       "- func: c(Tensor self) -> Tensor\n"
                       "- func: c.again(Tensor self) -> Tensor\n";
    fixture f;
    run(&f, yaml, false);
    CHECK(f.d.nerrors == 6);
    CHECK(has_diag(out(&f), "test.yaml", yaml, 1, "a_out", "error", "ends in '_out'"));
    CHECK(has_diag(out(&f), "test.yaml", yaml, 1, "Any", "error", "type 'Any'"));
    CHECK(has_diag(out(&f), "test.yaml", yaml, 2, "Sometimes", "error", "device_check"));
    CHECK(has_diag(out(&f), "test.yaml", yaml, 3, "Tensor self", "error", "must write 'self'"));
    CHECK(has_diag(out(&f), "test.yaml", yaml, 5, "CPUX", "error", "unknown dispatch key"));
    CHECK(has_diag(out(&f), "test.yaml", yaml, 7, "c.again", "error", "second functional"));
    if (check_failures) fprintf(stderr, "%s", out(&f));
    done(&f);
}

/* Tags are checked against a tags file only when one was given; its tags need a desc. */
static void test_tags_file(void) {
    const char *yaml = "- func: f(Tensor self) -> Tensor\n  tags: [anything]\n";
    fixture f;
    run(&f, yaml, false);
    CHECK(f.d.nerrors == 0);
    done(&f);
    const char *tags = "- tag: good\n  desc: fine\n- tag: bare\n  desc: ''\n";
    sg_model_init(&f.m);
    sg_diag_init(&f.d);
    sg_load_buffer(&f.m, "tags.yaml", tags, strlen(tags), &f.d);
    sg_model_group(&f.m, &f.d);
    sg_validate(&f.m, &f.d);
    CHECK(f.d.nerrors == 1);
    CHECK(has_diag(out(&f), "tags.yaml", tags, 3, "tag", "error", "tag 'bare' needs a description"));
    done(&f);
}

/* A func string written over several lines: positions still land on the right character. */
static void test_folded_positions(void) {
    const char *yaml = "- func: \"f(Tensor self,\n    Any x) -> Tensor\"\n";
    fixture f;
    run(&f, yaml, false);
    CHECK(f.d.nerrors == 1);
    CHECK(has_diag(out(&f), "test.yaml", yaml, 2, "Any", "error", "type 'Any'"));
    if (check_failures) fprintf(stderr, "%s", out(&f));
    done(&f);
}

/* ---- PyTorch's native_functions.yaml ----------------------------------------------------- */

static bool corpus_present(const char *path) {
    FILE *p = fopen(path, "rb");
    if (p) fclose(p);
    return p != NULL;
}

static void test_corpus(void) {
    const char *nf = SG_CORPUS_DIR "/native_functions.yaml", *tags = SG_CORPUS_DIR "/tags.yaml";
    if (!corpus_present(nf) || !corpus_present(tags)) {
        printf("test_corpus: skipped, %s or %s is absent\n", nf, tags);
        return;
    }
    fixture f;
    sg_model_init(&f.m);
    sg_diag_init(&f.d);
    f.d.max_errors = 0;
    CHECK(sg_load_file(&f.m, tags, &f.d) == 0);
    CHECK(sg_load_file(&f.m, nf, &f.d) == 0);
    CHECK(f.m.have_tags && f.m.ntags > 10 && f.m.nops == 2674);
    CHECK(sg_model_group(&f.m, &f.d) == 0);
    CHECK(sg_validate(&f.m, &f.d) == 0);
    CHECK(f.d.nerrors == 0);
    if (f.d.nerrors) fprintf(stderr, "%s", out(&f));

    /* Across inputs: a second file that defines abs again is refused, pointing at both. */
    const char *extra = "- func: abs(Tensor self) -> Tensor\n  dispatch:\n    CPU: my_abs\n";
    sg_load_buffer(&f.m, "extra.yaml", extra, strlen(extra), &f.d);
    sg_model_group(&f.m, &f.d);
    CHECK(sg_validate(&f.m, &f.d) >= 1);
    CHECK(has_diag(out(&f), "extra.yaml", extra, 1, "abs", "error", "operator 'aten::abs' is defined twice"));
    CHECK(strstr(out(&f), "native_functions.yaml:340:9: note: first defined here"));
    done(&f);
}

int main(void) {
    test_rules();
    test_custom_ops();
    test_notes();
    test_many_errors();
    test_tags_file();
    test_folded_positions();
    test_corpus();
    return check_result("test_validate");
}
