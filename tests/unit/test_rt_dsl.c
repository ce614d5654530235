/* test_rt_dsl.c: DSL artifacts in the runtime (runtime/dsl.c, sg_dsl.h) without a GPU:
 * registration and its refusals, listing, the switches (from the environment and from C), and
 * what loading and launching say where CUDA is missing (a build without it, or no device); the
 * same for object artifacts (load and run hooks instead of an image).
 * The GPU side is test_rt_dsl_cuda.c. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "check.h"
#include "sg_cuda.h"
#include "sg_dsl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char image[16] = {0x7f, 'E', 'L', 'F'};

/* An artifact with its own slot. */
typedef struct art {
    sg_dsl_slot     slot;
    sg_dsl_artifact a;
} art;

static art *make(const char *prefix, const char *op, const char *dsl) {
    art *t = calloc(1, sizeof *t);
    t->slot = (sg_dsl_slot)SG_DSL_SLOT_INIT;
    t->a = (sg_dsl_artifact){.prefix = prefix, .op = op, .dsl = dsl, .symbol = "k",
                             .cc_major = 9, .cc_minor = 0, .image = image,
                             .image_size = sizeof image, .block_x = 256, .shared = 0,
                             .nparams = 2, .slot = &t->slot};
    return t;
}

static bool listed(const sg_dsl_artifact *a) {
    const sg_dsl_artifact *all[256];
    size_t n = sg_dsl_list(all, 256);
    for (size_t i = 0; i < n && i < 256; i++)
        if (all[i] == a) return true;
    return false;
}

/* Set before any call (main): the switches are read from the environment once, at the first. */
static void test_env_switches(void) {
    art *x = make("env_x", "aten::mul.Tensor", "tridsl");
    art *y = make("env_y", "sg::foo", "triton");
    art *z = make("env_z", "aten::bar.x", "triton");
    art *w = make("env_w", "aten::bar.y", "triton");
    CHECK(sg_dsl_register(&x->a) == SG_OK);
    CHECK(sg_dsl_register(&y->a) == SG_OK);
    CHECK(sg_dsl_register(&z->a) == SG_OK);
    CHECK(sg_dsl_register(&w->a) == SG_OK);
    CHECK(!sg_dsl_enabled(&x->a)); /* SG_DSL_DISABLE=tridsl */
    CHECK(!sg_dsl_enabled(&y->a)); /* SG_DSL_DISABLE_OPS=" sg::foo , aten::bar.x" */
    CHECK(!sg_dsl_enabled(&z->a));
    CHECK(sg_dsl_enabled(&w->a));  /* another overload of the same op */
    CHECK(!sg_dsl_ready(&x->a, 0));
    /* switched on again from C */
    CHECK(sg_dsl_set_enabled("tridsl", true) == SG_OK);
    CHECK(sg_dsl_enabled(&x->a));
    CHECK(sg_dsl_set_enabled("sg::foo", true) == SG_OK);
    CHECK(sg_dsl_enabled(&y->a));
    CHECK(!sg_dsl_enabled(&z->a));
    CHECK(sg_dsl_set_enabled("aten::bar.x", true) == SG_OK);
    CHECK(sg_dsl_enabled(&z->a));
}

static void test_register_refusals(void) {
    CHECK(sg_dsl_register(NULL) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "sg_dsl_register: the artifact is NULL");
    art *t = make("bad_one", "aten::x", "triton");
    t->a.symbol = "";
    CHECK(sg_dsl_register(&t->a) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "bad_one: the artifact has no symbol");
    t->a.symbol = "k";
    t->a.image = NULL;
    CHECK(sg_dsl_register(&t->a) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "bad_one: the artifact has no image");
    t->a.image = image;
    t->a.image_size = 0;
    CHECK(sg_dsl_register(&t->a) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "has no image");
    t->a.image_size = sizeof image;
    t->a.op = NULL;
    CHECK(sg_dsl_register(&t->a) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "has no op");
    t->a.op = "aten::x";
    t->a.dsl = "";
    CHECK(sg_dsl_register(&t->a) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "has no DSL name");
    t->a.dsl = "triton";
    t->a.slot = NULL;
    CHECK(sg_dsl_register(&t->a) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "has no slot");
    t->a.slot = &t->slot;
    t->a.prefix = NULL;
    CHECK(sg_dsl_register(&t->a) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "(no prefix): the artifact has no prefix");
    t->a.prefix = "bad_one";
    t->a.block_x = 0;
    CHECK(sg_dsl_register(&t->a) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "bad_one: block_x is 0, not in 1..1024");
    t->a.block_x = 1025;
    CHECK(sg_dsl_register(&t->a) == SG_EINVAL);
    t->a.block_x = 1024;
    t->a.cc_major = 0;
    CHECK(sg_dsl_register(&t->a) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "capability 0.0 is not a CUDA one");
    t->a.cc_major = 9;
    t->a.cc_minor = 10;
    CHECK(sg_dsl_register(&t->a) == SG_EINVAL);
    t->a.cc_minor = 0;
    CHECK(!listed(&t->a)); /* nothing refused was kept */
    /* now complete: accepted */
    CHECK(sg_dsl_register(&t->a) == SG_OK);
    CHECK(listed(&t->a));
}

static void test_register_and_list(void) {
    size_t before = sg_dsl_list(NULL, 0);
    art *a = make("list_a", "aten::_fused_rms_norm", "triton");
    art *b = make("list_b", "aten::_softmax", "triton");
    CHECK(sg_dsl_register(&a->a) == SG_OK);
    CHECK(sg_dsl_register(&a->a) == SG_OK); /* again: a no-op */
    CHECK(sg_dsl_register(&b->a) == SG_OK);
    CHECK(sg_dsl_list(NULL, 0) == before + 2);
    /* registration order; a short array gets the first ones and the count of all */
    const sg_dsl_artifact **all = calloc(before + 2, sizeof *all);
    CHECK(sg_dsl_list(all, before + 2) == before + 2);
    CHECK(all[before] == &a->a && all[before + 1] == &b->a);
    const sg_dsl_artifact *one[1] = {NULL};
    CHECK(sg_dsl_list(one, 1) == before + 2);
    CHECK(one[0] != NULL);
    free(all);

    /* another artifact with a's prefix, or with a's slot */
    art *dup = make("list_a", "aten::other", "triton");
    CHECK(sg_dsl_register(&dup->a) == SG_EEXISTS);
    CHECK_HAS(sg_last_error(), "list_a: another artifact has this prefix");
    art *same_slot = make("list_c", "aten::other", "triton");
    same_slot->a.slot = &a->slot;
    CHECK(sg_dsl_register(&same_slot->a) == SG_EEXISTS);
    CHECK_HAS(sg_last_error(), "list_c: its slot belongs to list_a");
    CHECK(sg_dsl_list(NULL, 0) == before + 2);
    CHECK(!listed(&dup->a) && !listed(&same_slot->a));
    free(dup); /* refused: the runtime kept nothing of them */
    free(same_slot);
}

static void test_switches(void) {
    art *add = make("sw_add", "aten::add.Tensor", "triton");
    art *add_plain = make("sw_add_plain", "aten::add", "triton");
    art *addmm = make("sw_addmm", "aten::addmm", "triton");
    art *other = make("sw_other", "aten::add.Tensor", "otherdsl");
    CHECK(sg_dsl_register(&add->a) == SG_OK);
    CHECK(sg_dsl_register(&add_plain->a) == SG_OK);
    CHECK(sg_dsl_register(&addmm->a) == SG_OK);
    CHECK(sg_dsl_register(&other->a) == SG_OK);
    CHECK(sg_dsl_enabled(&add->a) && sg_dsl_enabled(&other->a));

    /* by DSL */
    CHECK(sg_dsl_set_enabled("triton", false) == SG_OK);
    CHECK(!sg_dsl_enabled(&add->a) && !sg_dsl_enabled(&addmm->a));
    CHECK(sg_dsl_enabled(&other->a));
    CHECK(!sg_dsl_ready(&add->a, 0));
    CHECK(sg_dsl_set_enabled("triton", false) == SG_OK); /* twice: still one switch */
    CHECK(sg_dsl_set_enabled("triton", true) == SG_OK);
    CHECK(sg_dsl_enabled(&add->a) && sg_dsl_enabled(&addmm->a));

    /* by op: the base name covers every overload, not another op that starts alike */
    CHECK(sg_dsl_set_enabled("aten::add", false) == SG_OK);
    CHECK(!sg_dsl_enabled(&add->a) && !sg_dsl_enabled(&add_plain->a) &&
          !sg_dsl_enabled(&other->a));
    CHECK(sg_dsl_enabled(&addmm->a));
    CHECK(sg_dsl_set_enabled("aten::add", true) == SG_OK);
    CHECK(sg_dsl_set_enabled("aten::add.Tensor", false) == SG_OK);
    CHECK(!sg_dsl_enabled(&add->a) && !sg_dsl_enabled(&other->a));
    CHECK(sg_dsl_enabled(&add_plain->a) && sg_dsl_enabled(&addmm->a));
    CHECK(sg_dsl_set_enabled("aten::add.Tensor", true) == SG_OK);
    CHECK(sg_dsl_enabled(&add->a));

    /* a switch set before registration applies to what registers later */
    CHECK(sg_dsl_set_enabled("aten::later", false) == SG_OK);
    art *later = make("sw_later", "aten::later", "triton");
    CHECK(sg_dsl_register(&later->a) == SG_OK);
    CHECK(!sg_dsl_enabled(&later->a));
    CHECK(sg_dsl_set_enabled("aten::later", true) == SG_OK);
    CHECK(sg_dsl_enabled(&later->a));

    /* names that cannot be one */
    CHECK(sg_dsl_set_enabled(NULL, false) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "sg_dsl_set_enabled: '(null)' is not a DSL or op name");
    CHECK(sg_dsl_set_enabled("", false) == SG_EINVAL);
    CHECK(sg_dsl_set_enabled("triton,other", false) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "'triton,other'");
    CHECK(sg_dsl_set_enabled("tri ton", true) == SG_EINVAL);
    CHECK(sg_dsl_enabled(&add->a));
    CHECK(!sg_dsl_enabled(NULL));
}

/* Without CUDA, or on a machine without a GPU: nothing loads or launches, and each says why. */
static void test_no_device(void) {
    art *t = make("nodev", "aten::nodev", "triton");
    CHECK(sg_dsl_register(&t->a) == SG_OK);
    CHECK(sg_dsl_capability(-1) == 0);
    CHECK(sg_dsl_capability(SG_DSL_MAX_DEVICES) == 0);
    CHECK(!sg_dsl_ready(&t->a, -1));
    CHECK(!sg_dsl_ready(&t->a, SG_DSL_MAX_DEVICES));
    CHECK(!sg_dsl_ready(NULL, 0));
    uint32_t grid[3] = {4, 1, 1};
    void    *args[2] = {NULL, NULL};
    CHECK(sg_dsl_launch(NULL, 0, grid, args, NULL) == SG_EINVAL);
    CHECK(sg_dsl_launch(&t->a, 0, NULL, args, NULL) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "nodev: the grid is NULL");
    CHECK(sg_dsl_launch(&t->a, 0, grid, NULL, NULL) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "args is NULL for 2 parameters");
    CHECK(sg_dsl_launch(&t->a, -1, grid, args, NULL) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "device -1 is out of range");
    if (sg_cuda_available(NULL)) return; /* a GPU: test_rt_dsl_cuda covers the rest */
    CHECK(sg_dsl_capability(0) == 0);
    CHECK(!sg_dsl_ready(&t->a, 0));
    CHECK(!sg_dsl_loaded(&t->a, 0) && !sg_dsl_failed(&t->a, 0));
    CHECK(sg_dsl_launch(&t->a, 0, grid, args, NULL) == SG_EDEVICE);
    CHECK_HAS(sg_last_error(), "sg_dsl_launch: nodev");
    const char *why = "";
    CHECK(!sg_cuda_available(&why));
    CHECK_HAS(sg_last_error(), why);
    CHECK(sg_dsl_preload(0) == SG_EDEVICE);
    CHECK_HAS(sg_last_error(), "sg_dsl_preload: cuda:0: ");
    CHECK_HAS(sg_last_error(), why);
    CHECK(sg_dsl_launch_count(&t->a) == 0 && sg_dsl_load_count(&t->a) == 0);
    CHECK_STR(sg_dsl_failure(&t->a), "");
}

/* Object artifacts (a DSL's own loader and entry, no image): hooks that count their calls. */
static int obj_loads, obj_runs;
static int obj_load(void) {
    obj_loads++;
    return 0;
}
static int obj_run(void **args, void *stream) {
    (void)args, (void)stream;
    obj_runs++;
    return 0;
}

static art *make_object(const char *prefix, const char *op, const char *dsl) {
    art *t = make(prefix, op, dsl);
    t->a.image = NULL;
    t->a.image_size = 0;
    t->a.block_x = 0; /* not read for an object artifact */
    t->a.load = obj_load;
    t->a.run = obj_run;
    return t;
}

static void test_object_register(void) {
    /* each refusal, named */
    art *t = make_object("obj_bad", "aten::obj", "objdsl");
    t->a.run = NULL;
    CHECK(sg_dsl_register(&t->a) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "sg_dsl_register: obj_bad: the artifact has a load hook but no "
                               "run hook (an object artifact needs both)");
    t->a.run = obj_run;
    t->a.load = NULL;
    CHECK(sg_dsl_register(&t->a) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "obj_bad: the artifact has a run hook but no load hook");
    t->a.load = obj_load;
    t->a.image = image;
    t->a.image_size = sizeof image;
    CHECK(sg_dsl_register(&t->a) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "obj_bad: the artifact has both an image and load/run hooks (an "
                               "object artifact has no image)");
    t->a.image = NULL; /* a size alone is an image too */
    CHECK(sg_dsl_register(&t->a) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "has both an image and load/run hooks");
    t->a.image_size = 0;
    t->a.load = NULL;
    t->a.run = NULL;
    CHECK(sg_dsl_register(&t->a) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "obj_bad: the artifact has no image (and no load/run hooks)");
    t->a.load = obj_load;
    t->a.run = obj_run;
    t->a.symbol = NULL; /* the wrapper's name, as an image's entry */
    CHECK(sg_dsl_register(&t->a) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "obj_bad: the artifact has no symbol");
    t->a.symbol = "cute_dsl_obj_bad_wrapper";
    t->a.cc_major = 0;
    CHECK(sg_dsl_register(&t->a) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "capability 0.0 is not a CUDA one");
    t->a.cc_major = 9;
    CHECK(!listed(&t->a));
    /* block_x 0 (any value) is fine for one: not read */
    CHECK(sg_dsl_register(&t->a) == SG_OK);
    CHECK(listed(&t->a));
    art *big = make_object("obj_block", "aten::obj", "objdsl");
    big->a.block_x = 4096;
    CHECK(sg_dsl_register(&big->a) == SG_OK);

    /* listed in order, a prefix or a slot taken by an image artifact is refused */
    size_t before = sg_dsl_list(NULL, 0);
    art   *img = make("obj_img", "aten::obj_img", "objdsl");
    art   *obj = make_object("obj_after", "aten::obj_after", "cutedsl");
    CHECK(sg_dsl_register(&img->a) == SG_OK);
    CHECK(sg_dsl_register(&obj->a) == SG_OK);
    CHECK(sg_dsl_register(&obj->a) == SG_OK); /* again: a no-op */
    const sg_dsl_artifact **all = calloc(before + 2, sizeof *all);
    CHECK(sg_dsl_list(all, before + 2) == before + 2);
    CHECK(all[before] == &img->a && all[before + 1] == &obj->a);
    free(all);
    art *dup = make_object("obj_img", "aten::other", "cutedsl");
    CHECK(sg_dsl_register(&dup->a) == SG_EEXISTS);
    CHECK_HAS(sg_last_error(), "obj_img: another artifact has this prefix");
    art *same = make_object("obj_same", "aten::other", "cutedsl");
    same->a.slot = &img->slot;
    CHECK(sg_dsl_register(&same->a) == SG_EEXISTS);
    CHECK_HAS(sg_last_error(), "obj_same: its slot belongs to obj_img");
    free(dup); /* refused: the runtime kept nothing of them */
    free(same);

    /* the switches, by DSL and by op, as for an image artifact */
    CHECK(sg_dsl_enabled(&obj->a));
    CHECK(sg_dsl_set_enabled("cutedsl", false) == SG_OK);
    CHECK(!sg_dsl_enabled(&obj->a) && sg_dsl_enabled(&img->a));
    CHECK(!sg_dsl_ready(&obj->a, 0));
    CHECK(sg_dsl_set_enabled("cutedsl", true) == SG_OK);
    CHECK(sg_dsl_set_enabled("aten::obj_after", false) == SG_OK);
    CHECK(!sg_dsl_enabled(&obj->a));
    CHECK(sg_dsl_set_enabled("aten::obj_after", true) == SG_OK);
    CHECK(sg_dsl_enabled(&obj->a));

    /* launched unregistered with one hook: refused before anything is called */
    art     *half = make_object("obj_half", "aten::obj", "cutedsl");
    uint32_t grid[3] = {1, 1, 1};
    void    *args[2] = {NULL, NULL};
    half->a.load = NULL;
    CHECK(sg_dsl_launch(&half->a, 0, grid, args, NULL) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "sg_dsl_launch: the artifact is NULL or not complete");
    CHECK(sg_dsl_launch(&obj->a, 0, grid, NULL, NULL) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "obj_after: args is NULL for 2 parameters");
    CHECK(obj_loads == 0 && obj_runs == 0);
    free(half);

    /* without CUDA or a device: neither hook runs, and each call says why */
    if (sg_cuda_available(NULL)) return;
    const char *why = "";
    CHECK(!sg_cuda_available(&why));
    CHECK(!sg_dsl_ready(&obj->a, 0));
    CHECK(!sg_dsl_loaded(&obj->a, 0) && !sg_dsl_failed(&obj->a, 0));
    CHECK(sg_dsl_launch(&obj->a, 0, grid, args, NULL) == SG_EDEVICE);
    CHECK_HAS(sg_last_error(), "sg_dsl_launch: obj_after");
    CHECK_HAS(sg_last_error(), why);
    /* an object's grid is its entry's: no limit to refuse, only the missing device */
    uint32_t huge[3] = {0xffffffffu, 0xffffffffu, 1};
    CHECK(sg_dsl_launch(&obj->a, 0, huge, args, NULL) == SG_EDEVICE);
    CHECK(sg_dsl_preload(0) == SG_EDEVICE);
    CHECK(obj_loads == 0 && obj_runs == 0);
    CHECK(sg_dsl_launch_count(&obj->a) == 0 && sg_dsl_load_count(&obj->a) == 0);
    CHECK_STR(sg_dsl_failure(&obj->a), "");
}

static void test_grid_fits(void) {
    CHECK(sg_dsl_grid_fits(0, 0, 0));
    CHECK(sg_dsl_grid_fits(1, 1, 1));
    CHECK(sg_dsl_grid_fits(INT32_MAX, 65535, 65535));
    CHECK(!sg_dsl_grid_fits((int64_t)INT32_MAX + 1, 1, 1));
    CHECK(!sg_dsl_grid_fits(1, 65536, 1));
    CHECK(!sg_dsl_grid_fits(1, 1, 65536));
    CHECK(!sg_dsl_grid_fits(-1, 1, 1));
    CHECK(!sg_dsl_grid_fits(1, -1, 1));
    CHECK(!sg_dsl_grid_fits(1, 1, -1));
    CHECK(!sg_dsl_grid_fits(INT64_MAX, 1, 1));
}

/* Registrations from several threads at once: each kept once (run under TSan too). */
enum { THREADS = 8, PER_THREAD = 16 };
static art *racers[THREADS][PER_THREAD];

static void *register_many(void *p) {
    art **mine = p;
    for (int i = 0; i < PER_THREAD; i++) {
        if (sg_dsl_register(&mine[i]->a) != SG_OK) return p;
        (void)sg_dsl_set_enabled(i % 2 ? "racedsl" : "aten::race", i % 3 == 0);
        (void)sg_dsl_enabled(&mine[i]->a);
        (void)sg_dsl_ready(&mine[i]->a, 0);
        (void)sg_dsl_list(NULL, 0);
    }
    return NULL;
}

static void test_threads(void) {
    size_t    before = sg_dsl_list(NULL, 0);
    pthread_t th[THREADS];
    static char names[THREADS][PER_THREAD][32];
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < PER_THREAD; i++) {
            snprintf(names[t][i], sizeof names[t][i], "race_%d_%d", t, i);
            racers[t][i] = make(names[t][i], "aten::race", "racedsl");
        }
    for (int t = 0; t < THREADS; t++) CHECK(pthread_create(&th[t], NULL, register_many, racers[t]) == 0);
    for (int t = 0; t < THREADS; t++) {
        void *r = NULL;
        pthread_join(th[t], &r);
        CHECK(r == NULL);
    }
    CHECK(sg_dsl_list(NULL, 0) == before + THREADS * PER_THREAD);
    CHECK(sg_dsl_set_enabled("racedsl", true) == SG_OK);
    CHECK(sg_dsl_set_enabled("aten::race", true) == SG_OK);
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < PER_THREAD; i++) CHECK(sg_dsl_enabled(&racers[t][i]->a));
}

int main(void) {
    setenv("SG_DSL_DISABLE", "tridsl", 1);
    setenv("SG_DSL_DISABLE_OPS", " sg::foo , aten::bar.x,,", 1);
    test_env_switches();
    test_register_refusals();
    test_register_and_list();
    test_switches();
    test_no_device();
    test_object_register();
    test_grid_fits();
    test_threads();
    return check_result("test_rt_dsl");
}
