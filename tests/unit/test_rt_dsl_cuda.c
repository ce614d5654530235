/* test_rt_dsl_cuda.c: DSL artifacts on a GPU (runtime/dsl.c): cubins made by nvcc at build time
 * (test_rt_dsl_kernels.cu, cmake/dsl.cmake's sg_dsl_test_cubins) are registered as artifacts
 * and loaded and launched through sg_dsl.h.
 *
 * Checks: preload; one load when many threads make the first call at once; launches counted and
 * run (blocks counted on the device); a zero grid launches nothing; grids beyond CUDA's limits
 * are refused; an image for another architecture marks the artifact failed and it declines from
 * then on; an artifact built for another capability declines without loading; a missing symbol;
 * dynamic shared memory of 48 KiB, 48 KiB + 1 (the opt-in; a control shows the same launch
 * without it fails) and more than the device allows; no load while the stream captures a graph;
 * the switches; another device where there are two. Object artifacts (hooks written here over
 * the CUDA runtime's library API, as a DSL's own loader and entry): one loader call under many
 * first calls, the entry's own grid run, zero grids, a failing loader (every device failed, the
 * message) and a failing entry, no load during capture. With the Triton artifacts the build
 * exported (tools/dsl_export.py over tests/data/dsl_test_plan.json.in), each shipped kernel is
 * launched from its sidecar's facts (symbol, shared memory, the two hidden scratch arguments)
 * and its results are checked against a reference computed here. Skips (77) without CUDA or a
 * GPU. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "sg_cuda.h"
#include "sg_dsl.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if !defined(SG_HAVE_CUDA) || !defined(SG_DSL_TEST_CUBINS)
int main(void) { SKIP("test_rt_dsl_cuda: this build has no CUDA support"); }
#else

#include <cuda.h>
#include <cuda_runtime_api.h>

static unsigned char *read_in(const char *dir, const char *name, size_t *size) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return b;
}

static unsigned char *read_file(const char *name, size_t *size) {
    return read_in(SG_DSL_TEST_CUBINS, name, size);
}

static unsigned char *good, *other;
static size_t         good_n, other_n;
static int            cc;

typedef struct art {
    sg_dsl_slot     slot;
    sg_dsl_artifact a;
} art;

static art *make(const char *prefix, const char *symbol, uint32_t shared, uint32_t nparams) {
    art *t = calloc(1, sizeof *t);
    t->slot = (sg_dsl_slot)SG_DSL_SLOT_INIT;
    t->a = (sg_dsl_artifact){.prefix = prefix, .op = "sg_test::dsl", .dsl = "testdsl",
                             .symbol = symbol, .cc_major = cc / 10, .cc_minor = cc % 10,
                             .image = good, .image_size = good_n, .block_x = 128,
                             .shared = shared, .nparams = nparams, .slot = &t->slot};
    CHECK(sg_dsl_register(&t->a) == SG_OK);
    return t;
}

static unsigned *dev_zeros(size_t n) {
    unsigned *p = NULL;
    CHECK(cudaMalloc((void **)&p, n * sizeof *p) == cudaSuccess);
    CHECK(cudaMemset(p, 0, n * sizeof *p) == cudaSuccess);
    return p;
}

static unsigned read_u(const unsigned *p) {
    unsigned v = 0;
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(cudaMemcpy(&v, p, sizeof v, cudaMemcpyDeviceToHost) == cudaSuccess);
    return v;
}

/* ---- one load under many first calls ---------------------------------------------------- */

enum { THREADS = 16, LAUNCHES = 8 };
static pthread_barrier_t start;
static art              *racer;
static unsigned         *race_counter;

static void *first_call(void *unused) {
    (void)unused;
    if (sg_cuda_set_device(0) != SG_OK) return (void *)1;
    pthread_barrier_wait(&start);
    if (!sg_dsl_ready(&racer->a, 0)) return (void *)2;
    uint32_t grid[3] = {1, 1, 1};
    void    *args[1] = {&race_counter};
    for (int i = 0; i < LAUNCHES; i++)
        if (sg_dsl_launch(&racer->a, 0, grid, args, NULL) != SG_OK) return (void *)3;
    return NULL;
}

static void test_one_load(void) {
    racer = make("t_race", "dsl_test_count", 0, 1);
    race_counter = dev_zeros(1);
    pthread_t th[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&th[i], NULL, first_call, NULL) == 0);
    for (int i = 0; i < THREADS; i++) {
        void *r = (void *)9;
        pthread_join(th[i], &r);
        CHECK(r == NULL);
    }
    pthread_barrier_destroy(&start);
    CHECK(sg_dsl_load_count(&racer->a) == 1);
    CHECK(sg_dsl_launch_count(&racer->a) == THREADS * LAUNCHES);
    CHECK(read_u(race_counter) == THREADS * LAUNCHES);
    cudaFree(race_counter);
}

/* ---- launches and grids ----------------------------------------------------------------- */

static void test_launch(void) {
    art *t = make("t_count", "dsl_test_count", 0, 1);
    CHECK(!sg_dsl_loaded(&t->a, 0));
    unsigned *counter = dev_zeros(1);
    void     *args[1] = {&counter};
    uint32_t  grid[3] = {5, 2, 3};
    CHECK(sg_dsl_launch(&t->a, 0, grid, args, NULL) == SG_OK); /* loads on first launch */
    CHECK(sg_dsl_loaded(&t->a, 0));
    CHECK(read_u(counter) == 30);
    CHECK(sg_dsl_launch_count(&t->a) == 1);

    /* zero grids: OK, nothing launched */
    uint32_t zeros[3][3] = {{0, 1, 1}, {4, 0, 1}, {4, 1, 0}};
    for (int i = 0; i < 3; i++) CHECK(sg_dsl_launch(&t->a, 0, zeros[i], args, NULL) == SG_OK);
    CHECK(read_u(counter) == 30);
    CHECK(sg_dsl_launch_count(&t->a) == 1);

    /* beyond CUDA's limits: refused, nothing launched */
    uint32_t big[3][3] = {{0x80000000u, 1, 1}, {1, 65536, 1}, {1, 1, 65536}};
    for (int i = 0; i < 3; i++) {
        CHECK(sg_dsl_launch(&t->a, 0, big[i], args, NULL) == SG_EINVAL);
        CHECK_HAS(sg_last_error(), "t_count: grid [");
        CHECK_HAS(sg_last_error(), "beyond CUDA's limits");
    }
    /* the limits themselves are fine: y and z at 65535 */
    uint32_t edge[3] = {1, 65535, 1};
    CHECK(sg_dsl_launch(&t->a, 0, edge, args, NULL) == SG_OK);
    CHECK(read_u(counter) == 30 + 65535);
    CHECK(sg_dsl_launch_count(&t->a) == 2);

    /* on a stream of the caller's */
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s) == cudaSuccess);
    uint32_t one[3] = {7, 1, 1};
    CHECK(sg_dsl_launch(&t->a, 0, one, args, s) == SG_OK);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess);
    CHECK(read_u(counter) == 30 + 65535 + 7);
    cudaStreamDestroy(s);

    /* switched off: declines though loaded; on again: ready */
    CHECK(sg_dsl_ready(&t->a, 0));
    CHECK(sg_dsl_set_enabled("testdsl", false) == SG_OK);
    CHECK(!sg_dsl_ready(&t->a, 0));
    CHECK(sg_dsl_set_enabled("testdsl", true) == SG_OK);
    CHECK(sg_dsl_ready(&t->a, 0));
    CHECK(sg_dsl_load_count(&t->a) == 1);
    cudaFree(counter);
}

/* ---- images that cannot run here -------------------------------------------------------- */

static void test_failures(void) {
    /* an image for another architecture, said to be for this one: the load fails */
    art *w = make("t_wrong_arch", "dsl_test_count", 0, 1);
    w->a.image = other;
    w->a.image_size = other_n;
    CHECK(!sg_dsl_ready(&w->a, 0));
    CHECK(sg_dsl_failed(&w->a, 0));
    CHECK_HAS(sg_dsl_failure(&w->a), "t_wrong_arch on cuda:0: cannot load the image");
    CHECK(!sg_dsl_ready(&w->a, 0)); /* declines from then on, no second try */
    unsigned *counter = dev_zeros(1);
    void     *args[1] = {&counter};
    uint32_t  grid[3] = {1, 1, 1};
    CHECK(sg_dsl_launch(&w->a, 0, grid, args, NULL) == SG_EDEVICE);
    CHECK_HAS(sg_last_error(), "cannot load the image");
    CHECK(sg_dsl_load_count(&w->a) == 0 && sg_dsl_launch_count(&w->a) == 0);

    /* built for another capability: declines without trying to load */
    art *o = make("t_other_cc", "dsl_test_count", 0, 1);
    o->a.image = other;
    o->a.image_size = other_n;
    o->a.cc_major = cc == 80 ? 9 : 8;
    o->a.cc_minor = 0;
    CHECK(!sg_dsl_ready(&o->a, 0));
    CHECK(!sg_dsl_failed(&o->a, 0));
    CHECK_STR(sg_dsl_failure(&o->a), "");
    CHECK(sg_dsl_launch(&o->a, 0, grid, args, NULL) == SG_EDEVICE);
    CHECK_HAS(sg_last_error(), "was built for sm_");

    /* a symbol the image does not have */
    art *m = make("t_no_symbol", "dsl_test_nope", 0, 1);
    CHECK(!sg_dsl_ready(&m->a, 0));
    CHECK(sg_dsl_failed(&m->a, 0));
    CHECK_HAS(sg_dsl_failure(&m->a), "the image has no kernel 'dsl_test_nope'");

    /* more threads per block than the kernel allows is refused at registration */
    art *b = calloc(1, sizeof *b);
    b->a = w->a;
    b->a.prefix = "t_block";
    b->a.block_x = 2048;
    b->a.slot = &b->slot;
    CHECK(sg_dsl_register(&b->a) == SG_EINVAL);

    /* a device that does not exist */
    int n = sg_cuda_device_count();
    CHECK(!sg_dsl_ready(&m->a, n));
    CHECK(sg_dsl_capability(n) == 0);
    CHECK(sg_dsl_preload(n) == SG_EDEVICE);
    CHECK_HAS(sg_last_error(), "does not exist");

    /* an image at an odd address (a byte array has no alignment) still loads */
    unsigned char *odd = malloc(good_n + 1);
    memcpy(odd + 1, good, good_n);
    art *u = make("t_unaligned", "dsl_test_count", 0, 1);
    u->a.image = odd + 1;
    CHECK(sg_dsl_ready(&u->a, 0));
    CHECK(sg_dsl_launch(&u->a, 0, grid, args, NULL) == SG_OK);
    CHECK(read_u(counter) == 1);

    /* the GPU still works */
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    cudaFree(counter);
}

/* ---- dynamic shared memory -------------------------------------------------------------- */

static void shared_case(const char *prefix, uint32_t bytes) {
    art      *t = make(prefix, "dsl_test_shared", bytes, 2);
    unsigned *out = dev_zeros(2);
    unsigned  nbytes = bytes;
    void     *args[2] = {&out, &nbytes};
    uint32_t  grid[3] = {2, 1, 1};
    CHECK(sg_dsl_launch(&t->a, 0, grid, args, NULL) == SG_OK);
    if (sg_last_status() != SG_OK) fprintf(stderr, "%s: %s\n", prefix, sg_last_error());
    CHECK(read_u(out) == bytes);
    CHECK(read_u(out + 1) == bytes);
    cudaFree(out);
}

typedef CUresult (*pfn_load)(CUmodule *, const void *);
typedef CUresult (*pfn_get_function)(CUfunction *, CUmodule, const char *);
typedef CUresult (*pfn_launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, CUstream, void **, void **);

static void *driver_fn(const char *name) {
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
#if CUDART_VERSION >= 12050
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess)
#else
    if (cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &q) != cudaSuccess)
#endif
        fn = NULL;
    return fn;
}

/* The control: the kernel launched with 48 KiB + 1 of dynamic shared memory without the opt-in
 * fails, so the passing case above is the runtime's doing. */
static void test_shared_control(void) {
    void    *p_load = driver_fn("cuModuleLoadData"), *p_get = driver_fn("cuModuleGetFunction"),
             *p_launch = driver_fn("cuLaunchKernel");
    CHECK(p_load && p_get && p_launch);
    if (!p_load || !p_get || !p_launch) return;
    pfn_load         load;
    pfn_get_function get;
    pfn_launch       launch;
    memcpy(&load, &p_load, sizeof load);
    memcpy(&get, &p_get, sizeof get);
    memcpy(&launch, &p_launch, sizeof launch);
    CUmodule   mod;
    CUfunction f;
    CHECK(load(&mod, good) == CUDA_SUCCESS);
    CHECK(get(&f, mod, "dsl_test_shared") == CUDA_SUCCESS);
    unsigned *out = dev_zeros(1);
    unsigned  nbytes = 48 * 1024 + 1;
    void     *args[2] = {&out, &nbytes};
    CHECK(launch(f, 1, 1, 1, 128, 1, 1, nbytes, NULL, args, NULL) != CUDA_SUCCESS);
    nbytes = 48 * 1024;
    CHECK(launch(f, 1, 1, 1, 128, 1, 1, nbytes, NULL, args, NULL) == CUDA_SUCCESS);
    CHECK(read_u(out) == nbytes);
    cudaFree(out);
}

static void test_shared(void) {
    shared_case("t_shared_48k", 48 * 1024);
    shared_case("t_shared_48k_1", 48 * 1024 + 1);
    shared_case("t_shared_96k", 96 * 1024);
    test_shared_control();
    int optin = 0;
    CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0) ==
          cudaSuccess);
    art *t = make("t_shared_too_much", "dsl_test_shared", (uint32_t)optin + 1, 2);
    CHECK(!sg_dsl_ready(&t->a, 0));
    CHECK(sg_dsl_failed(&t->a, 0));
    CHECK_HAS(sg_dsl_failure(&t->a), "bytes of shared memory per block; the device allows");
}

/* ---- capture and preload ---------------------------------------------------------------- */

static void test_capture(void) {
    art         *t = make("t_capture", "dsl_test_count", 0, 1);
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    CHECK(sg_cuda_set_stream(s) == SG_OK);
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) == cudaSuccess);
    CHECK(!sg_dsl_ready(&t->a, 0)); /* no load during capture */
    CHECK(!sg_dsl_loaded(&t->a, 0) && !sg_dsl_failed(&t->a, 0));
    CHECK(sg_dsl_preload(0) == SG_ESTATE);
    CHECK_HAS(sg_last_error(), "capturing");
    unsigned *counter = NULL;
    void     *args[1] = {&counter};
    uint32_t  grid[3] = {1, 1, 1};
    CHECK(sg_dsl_launch(&t->a, 0, grid, args, s) == SG_ESTATE);
    /* the launch's own stream counts: the thread's current one no longer captures, s does */
    art *t2 = make("t_capture_launch", "dsl_test_count", 0, 1);
    CHECK(sg_cuda_set_stream(NULL) == SG_OK);
    CHECK(sg_dsl_launch(&t2->a, 0, grid, args, s) == SG_ESTATE);
    CHECK_HAS(sg_last_error(), "t_capture_launch is not loaded on cuda:0 and the stream is capturing");
    CHECK(!sg_dsl_loaded(&t2->a, 0) && !sg_dsl_failed(&t2->a, 0));
    cudaGraph_t g = NULL;
    CHECK(cudaStreamEndCapture(s, &g) == cudaSuccess);
    if (g) cudaGraphDestroy(g);
    CHECK(sg_dsl_load_count(&t->a) == 0);
    /* after capture: loads */
    CHECK(sg_dsl_ready(&t->a, 0));
    CHECK(sg_dsl_load_count(&t->a) == 1);
    CHECK(sg_dsl_ready(&t2->a, 0));
    cudaStreamDestroy(s);
}

static void test_preload(void) {
    art *a = make("t_pre_a", "dsl_test_count", 0, 1);
    art *b = make("t_pre_b", "dsl_test_shared", 0, 2);
    /* the failed ones registered before count, and are named */
    CHECK(sg_dsl_preload(0) == SG_EDEVICE);
    CHECK_HAS(sg_last_error(), "artifacts failed to load; the first: t_wrong_arch on cuda:0");
    CHECK(sg_dsl_loaded(&a->a, 0) && sg_dsl_loaded(&b->a, 0));
    CHECK(sg_dsl_load_count(&a->a) == 1 && sg_dsl_load_count(&b->a) == 1);
    CHECK(sg_dsl_preload(0) == SG_EDEVICE); /* again: nothing loads twice */
    CHECK(sg_dsl_load_count(&a->a) == 1);
}

/* ---- object artifacts ------------------------------------------------------------------- */

/* An object artifact's hooks stand in for a DSL's own loader and entry (CuTeDSL's export_to_c):
 * the loader loads the test cubin with the CUDA runtime's library API, which loads it for every
 * device, and the entry launches dsl_test_count over a grid of its own choosing. Each hook
 * counts its calls. */
#if CUDART_VERSION >= 12050
enum { OBJ_BLOCKS = 4 };
static cudaLibrary_t obj_lib;
static cudaKernel_t  obj_kernel;
static int           obj_loads, obj_runs, fail_loads, capture_loads;
static cudaError_t   bad_run_error = cudaSuccess;

static int obj_load(void) {
    __atomic_fetch_add(&obj_loads, 1, __ATOMIC_RELAXED);
    /* a pause, so that the other threads' first calls arrive while this one loads */
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    cudaError_t e = cudaLibraryLoadData(&obj_lib, good, NULL, NULL, 0, NULL, NULL, 0);
    if (e == cudaSuccess) e = cudaLibraryGetKernel(&obj_kernel, obj_lib, "dsl_test_count");
    /* as a loader that walks the devices leaves the last one current: the runtime restores */
    int n = 0;
    if (e == cudaSuccess && cudaGetDeviceCount(&n) == cudaSuccess && n > 1)
        e = cudaSetDevice(n - 1);
    return (int)e;
}

static int obj_run(void **args, void *stream) {
    __atomic_fetch_add(&obj_runs, 1, __ATOMIC_RELAXED);
    dim3 grid = {OBJ_BLOCKS, 1, 1}, block = {128, 1, 1};
    return (int)cudaLaunchKernel((const void *)obj_kernel, grid, block, args, 0,
                                 (cudaStream_t)stream);
}

static int fail_load(void) {
    __atomic_fetch_add(&fail_loads, 1, __ATOMIC_RELAXED);
    return (int)cudaErrorInvalidKernelImage;
}

/* Loads nothing: its entry uses the kernel obj_load found. */
static int capture_load(void) {
    __atomic_fetch_add(&capture_loads, 1, __ATOMIC_RELAXED);
    return 0;
}

static int no_load(void) { return 0; }

/* An entry whose launch CUDA refuses: more threads per block than any device runs. */
static int bad_run(void **args, void *stream) {
    dim3 grid = {1, 1, 1}, block = {2048, 1, 1};
    bad_run_error = cudaLaunchKernel((const void *)obj_kernel, grid, block, args, 0,
                                     (cudaStream_t)stream);
    return (int)bad_run_error;
}

static art *make_object(const char *prefix, int (*load)(void), int (*run)(void **, void *)) {
    art *t = calloc(1, sizeof *t);
    t->slot = (sg_dsl_slot)SG_DSL_SLOT_INIT;
    t->a = (sg_dsl_artifact){.prefix = prefix, .op = "sg_test::dsl_obj", .dsl = "testobj",
                             .symbol = "cute_dsl_test_wrapper", .cc_major = cc / 10,
                             .cc_minor = cc % 10, .load = load, .run = run, .nparams = 1,
                             .slot = &t->slot};
    CHECK(sg_dsl_register(&t->a) == SG_OK);
    return t;
}

static art      *obj;
static unsigned *obj_counter;

/* Half the threads ask sg_dsl_ready first, half launch at once: either loads. */
static void *obj_first_call(void *p) {
    bool ready_first = (uintptr_t)p % 2;
    if (sg_cuda_set_device(0) != SG_OK) return (void *)1;
    pthread_barrier_wait(&start);
    if (ready_first && !sg_dsl_ready(&obj->a, 0)) return (void *)2;
    uint32_t grid[3] = {1, 1, 1};
    void    *args[1] = {&obj_counter};
    for (int i = 0; i < LAUNCHES; i++)
        if (sg_dsl_launch(&obj->a, 0, grid, args, NULL) != SG_OK) return (void *)3;
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess || cur != 0) return (void *)4;
    return NULL;
}

static void test_object_one_load(void) {
    obj = make_object("t_obj", obj_load, obj_run);
    obj_counter = dev_zeros(1);
    CHECK(!sg_dsl_loaded(&obj->a, 0) && !sg_dsl_failed(&obj->a, 0));
    pthread_t th[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&th[i], NULL, obj_first_call, (void *)(uintptr_t)i) == 0);
    for (int i = 0; i < THREADS; i++) {
        void *r = (void *)9;
        pthread_join(th[i], &r);
        CHECK(r == NULL);
    }
    pthread_barrier_destroy(&start);
    CHECK(__atomic_load_n(&obj_loads, __ATOMIC_RELAXED) == 1);
    CHECK(sg_dsl_load_count(&obj->a) == 1);
    CHECK(sg_dsl_launch_count(&obj->a) == THREADS * LAUNCHES);
    CHECK(__atomic_load_n(&obj_runs, __ATOMIC_RELAXED) == THREADS * LAUNCHES);
    /* the entry's own grid ran: OBJ_BLOCKS blocks a launch */
    CHECK(read_u(obj_counter) == THREADS * LAUNCHES * OBJ_BLOCKS);
    /* every device of the capability has the loader's outcome */
    for (int d = 0; d < sg_cuda_device_count() && d < SG_DSL_MAX_DEVICES; d++)
        CHECK(sg_dsl_loaded(&obj->a, d) == (sg_dsl_capability(d) == cc));
    CHECK_STR(sg_dsl_failure(&obj->a), "");
}

static void test_object_launch(void) {
    unsigned *counter = obj_counter;
    unsigned  before = read_u(counter);
    int       runs = obj_runs;
    void     *args[1] = {&counter};
    uint64_t  launched = sg_dsl_launch_count(&obj->a);

    /* a zero dimension runs nothing */
    uint32_t zeros[3][3] = {{0, 1, 1}, {4, 0, 1}, {4, 1, 0}};
    for (int i = 0; i < 3; i++) CHECK(sg_dsl_launch(&obj->a, 0, zeros[i], args, NULL) == SG_OK);
    CHECK(obj_runs == runs);
    CHECK(read_u(counter) == before);
    CHECK(sg_dsl_launch_count(&obj->a) == launched);

    /* other values are the entry's business: beyond CUDA's limits runs its own grid */
    uint32_t big[3] = {0x80000000u, 65536, 65536};
    CHECK(sg_dsl_launch(&obj->a, 0, big, args, NULL) == SG_OK);
    CHECK(read_u(counter) == before + OBJ_BLOCKS);
    CHECK(sg_dsl_launch_count(&obj->a) == launched + 1);

    /* on a stream of the caller's */
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s) == cudaSuccess);
    uint32_t one[3] = {1, 1, 1};
    CHECK(sg_dsl_launch(&obj->a, 0, one, args, s) == SG_OK);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess);
    CHECK(read_u(counter) == before + 2 * OBJ_BLOCKS);
    CHECK(cudaStreamDestroy(s) == cudaSuccess);

    /* the switches: declines though loaded, then ready again without a second load */
    CHECK(sg_dsl_ready(&obj->a, 0));
    CHECK(sg_dsl_set_enabled("testobj", false) == SG_OK);
    CHECK(!sg_dsl_ready(&obj->a, 0));
    CHECK(sg_dsl_set_enabled("testobj", true) == SG_OK);
    CHECK(sg_dsl_ready(&obj->a, 0));
    CHECK(obj_loads == 1 && sg_dsl_load_count(&obj->a) == 1);

    /* an entry that fails: SG_EDEVICE with CUDA's name for it, nothing counted */
    art *b = make_object("t_obj_bad_run", no_load, bad_run);
    CHECK(sg_dsl_ready(&b->a, 0));
    CHECK(sg_dsl_launch(&b->a, 0, one, args, NULL) == SG_EDEVICE);
    CHECK(bad_run_error != cudaSuccess);
    char want[256];
    snprintf(want, sizeof want, "sg_dsl_launch: t_obj_bad_run on cuda:0: %s: %s",
             cudaGetErrorName(bad_run_error), cudaGetErrorString(bad_run_error));
    CHECK_STR(sg_last_error(), want);
    CHECK(sg_dsl_launch_count(&b->a) == 0);
    CHECK(cudaPeekAtLastError() == cudaSuccess); /* the runtime took the error it reported */

    /* a second device of the capability: loaded by the one load, launched there */
    if (sg_cuda_device_count() >= 2 && sg_dsl_capability(1) == cc) {
        CHECK(sg_dsl_loaded(&obj->a, 1));
        CHECK(cudaSetDevice(1) == cudaSuccess);
        unsigned *c1 = dev_zeros(1);
        CHECK(cudaSetDevice(0) == cudaSuccess);
        void *a1[1] = {&c1};
        CHECK(sg_dsl_launch(&obj->a, 1, one, a1, NULL) == SG_OK);
        int cur = -1;
        CHECK(cudaGetDevice(&cur) == cudaSuccess && cur == 0);
        CHECK(cudaSetDevice(1) == cudaSuccess);
        CHECK(read_u(c1) == OBJ_BLOCKS);
        CHECK(cudaFree(c1) == cudaSuccess);
        CHECK(cudaSetDevice(0) == cudaSuccess);
        CHECK(obj_loads == 1);
    }
    /* the GPU still works */
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
}

static void test_object_failed_load(void) {
    art *f = make_object("t_obj_fail", fail_load, obj_run);
    int  runs = obj_runs;
    CHECK(!sg_dsl_ready(&f->a, 0));
    CHECK(fail_loads == 1);
    char want[512];
    snprintf(want, sizeof want, "t_obj_fail on cuda:0: the DSL's loader failed: %s: %s",
             cudaGetErrorName(cudaErrorInvalidKernelImage),
             cudaGetErrorString(cudaErrorInvalidKernelImage));
    CHECK_STR(sg_dsl_failure(&f->a), want);
    CHECK_HAS(sg_dsl_failure(&f->a), "cudaErrorInvalidKernelImage");
    /* every device of the capability is failed, without a second call */
    for (int d = 0; d < sg_cuda_device_count() && d < SG_DSL_MAX_DEVICES; d++) {
        CHECK(sg_dsl_failed(&f->a, d) == (sg_dsl_capability(d) == cc));
        CHECK(!sg_dsl_loaded(&f->a, d));
        CHECK(!sg_dsl_ready(&f->a, d));
    }
    CHECK(fail_loads == 1);
    /* a launch says why and runs nothing */
    unsigned *counter = NULL;
    void     *args[1] = {&counter};
    uint32_t  grid[3] = {1, 1, 1};
    CHECK(sg_dsl_launch(&f->a, 0, grid, args, NULL) == SG_EDEVICE);
    char launch_want[600];
    snprintf(launch_want, sizeof launch_want, "sg_dsl_launch: %s", want);
    CHECK_STR(sg_last_error(), launch_want);
    CHECK(sg_dsl_preload(0) == SG_EDEVICE); /* counted among the failed, not tried again */
    CHECK(fail_loads == 1);
    CHECK(obj_runs == runs);
    CHECK(sg_dsl_load_count(&f->a) == 0 && sg_dsl_launch_count(&f->a) == 0);
}

static void test_object_capture(void) {
    art         *t = make_object("t_obj_capture", capture_load, obj_run);
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    CHECK(sg_cuda_set_stream(s) == SG_OK);
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) == cudaSuccess);
    CHECK(!sg_dsl_ready(&t->a, 0)); /* the loader does not run during capture */
    CHECK(sg_dsl_preload(0) == SG_ESTATE);
    unsigned *counter = NULL;
    void     *args[1] = {&counter};
    uint32_t  grid[3] = {1, 1, 1};
    CHECK(sg_dsl_launch(&t->a, 0, grid, args, s) == SG_ESTATE);
    CHECK_HAS(sg_last_error(), "t_obj_capture is not loaded on cuda:0 and the stream is capturing");
    CHECK(capture_loads == 0);
    CHECK(!sg_dsl_loaded(&t->a, 0) && !sg_dsl_failed(&t->a, 0));
    cudaGraph_t g = NULL;
    CHECK(cudaStreamEndCapture(s, &g) == cudaSuccess);
    if (g) CHECK(cudaGraphDestroy(g) == cudaSuccess);
    CHECK(sg_cuda_set_stream(NULL) == SG_OK);
    CHECK(cudaStreamDestroy(s) == cudaSuccess);
    /* after capture: loads, once */
    CHECK(sg_dsl_ready(&t->a, 0));
    CHECK(sg_dsl_ready(&t->a, 0));
    CHECK(capture_loads == 1 && sg_dsl_load_count(&t->a) == 1);
}

static void test_objects(void) {
    test_object_one_load();
    test_object_launch();
    test_object_failed_load();
    test_object_capture();
    cudaFree(obj_counter);
}
#else
static void test_objects(void) {
    printf("test_rt_dsl_cuda: the CUDA runtime has no library API (12.5 and later): the object "
           "artifact cases are left out\n");
}
#endif

/* ---- a second device -------------------------------------------------------------------- */

static void test_second_device(void) {
    if (sg_cuda_device_count() < 2 || sg_dsl_capability(1) != cc) {
        printf("test_rt_dsl_cuda: one device of this capability: the second-device case is left out\n");
        return;
    }
    art      *t = make("t_dev1", "dsl_test_count", 0, 1);
    unsigned *c0 = dev_zeros(1);
    CHECK(cudaSetDevice(1) == cudaSuccess);
    unsigned *c1 = dev_zeros(1);
    CHECK(cudaSetDevice(0) == cudaSuccess);
    uint32_t grid[3] = {3, 1, 1};
    void    *a0[1] = {&c0}, *a1[1] = {&c1};
    CHECK(sg_dsl_launch(&t->a, 0, grid, a0, NULL) == SG_OK);
    CHECK(sg_dsl_launch(&t->a, 1, grid, a1, NULL) == SG_OK); /* device 0 stays current */
    int cur = -1;
    CHECK(cudaGetDevice(&cur) == cudaSuccess && cur == 0);
    CHECK(sg_dsl_load_count(&t->a) == 2);
    CHECK(read_u(c0) == 3);
    CHECK(cudaSetDevice(1) == cudaSuccess);
    CHECK(read_u(c1) == 3);
    CHECK(cudaSetDevice(0) == cudaSuccess);
    cudaFree(c0);
    cudaFree(c1);
}


/* ---- Triton artifacts ------------------------------------------------------------------- */

#ifdef SG_DSL_TEST_TRITON
enum { ROWS = 64 };

/* A number from the sidecar's top level ("shared": 32). */
static long sidecar_number(const char *json, const char *key) {
    char        pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(json, pat);
    return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

static uint64_t rng = 88172645463325252ull;
static float    rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 4.0 - 2.0);
}

static float *dev_from(const float *h, size_t n) {
    float *d = NULL;
    CHECK(cudaMalloc((void **)&d, n * sizeof *d) == cudaSuccess);
    if (h) CHECK(cudaMemcpy(d, h, n * sizeof *d, cudaMemcpyHostToDevice) == cudaSuccess);
    return d;
}

static void host_from(float *h, const float *d, size_t n) {
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(cudaMemcpy(h, d, n * sizeof *h, cudaMemcpyDeviceToHost) == cudaSuccess);
}

/* Whether got agrees with want (double) to float32 accuracy; names the first difference. */
static bool close_to(const char *what, const float *got, const double *want, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= 1e-5 + 1e-4 * fabs(want[i]))) {
            fprintf(stderr, "%s[%zu]: got %.9g, expected %.9g\n", what, i, got[i], want[i]);
            return false;
        }
    return true;
}

/* Registers the exported artifact PREFIX (PREFIX.cubin, PREFIX.json) with nparams visible
 * parameters and launches it over ROWS rows. */
static bool triton_launch(const char *prefix, const char *symbol, uint32_t warps, uint32_t nvis,
                          void **args) {
    char   name[256];
    size_t n = 0, jn = 0;
    snprintf(name, sizeof name, "%s.json", prefix);
    char *json = (char *)read_in(SG_DSL_TEST_TRITON, name, &jn);
    snprintf(name, sizeof name, "%s.cubin", prefix);
    unsigned char *img = read_in(SG_DSL_TEST_TRITON, name, &n);
    CHECK(json && img);
    if (!json || !img) return false;
    json = realloc(json, jn + 1);
    json[jn] = '\0';
    char sym[128];
    snprintf(sym, sizeof sym, "\"symbol\": \"%s\"", symbol);
    CHECK(strstr(json, sym) != NULL);
    long shared = sidecar_number(json, "shared");
    CHECK(shared >= 0 && sidecar_number(json, "num_warps") == (long)warps);
    CHECK(strstr(json, "{\"name\": \"global_scratch\", \"size\": 0") != NULL);
    CHECK(strstr(json, "{\"name\": \"profile_scratch\", \"size\": 0") != NULL);
    art *t = calloc(1, sizeof *t);
    t->slot = (sg_dsl_slot)SG_DSL_SLOT_INIT;
    t->a = (sg_dsl_artifact){.prefix = prefix, .op = "sg_test::triton", .dsl = "triton",
                             .symbol = symbol, .cc_major = 9, .cc_minor = 0, .image = img,
                             .image_size = n, .block_x = warps * 32, .shared = (uint32_t)shared,
                             .nparams = nvis + 2, .slot = &t->slot};
    CHECK(sg_dsl_register(&t->a) == SG_OK);
    /* the two hidden scratch pointers (size 0: null) follow the declared parameters */
    static void *scratch[2] = {NULL, NULL};
    args[nvis] = &scratch[0];
    args[nvis + 1] = &scratch[1];
    uint32_t  grid[3] = {ROWS, 1, 1};
    sg_status st = sg_dsl_launch(&t->a, 0, grid, args, NULL);
    if (st) fprintf(stderr, "%s: %s\n", prefix, sg_last_error());
    CHECK(st == SG_OK);
    CHECK(sg_dsl_launch_count(&t->a) == 1);
    free(json);
    return st == SG_OK;
}

static void test_triton_rms(void) {
    enum { N = 4096 };
    float  *x = malloc(sizeof(float) * ROWS * N), *w = malloc(sizeof(float) * N);
    float  *y = malloc(sizeof(float) * ROWS * N), rs[ROWS];
    double *want = malloc(sizeof(double) * ROWS * N), want_r[ROWS];
    for (int i = 0; i < ROWS * N; i++) x[i] = rnd();
    for (int i = 0; i < N; i++) w[i] = rnd();
    float *dx = dev_from(x, ROWS * N), *dw = dev_from(w, N), *dy = dev_from(NULL, ROWS * N),
          *dr = dev_from(NULL, ROWS);
    float eps = 1e-6f;
    void *args[7] = {&dx, &dw, &dy, &dr, &eps};
    if (triton_launch("t_rms__float32_4096__sm90", "rms_norm_fwd", 8, 5, args)) {
        host_from(y, dy, ROWS * N);
        host_from(rs, dr, ROWS);
        for (int r = 0; r < ROWS; r++) {
            double ss = 0;
            for (int i = 0; i < N; i++) ss += (double)x[r * N + i] * x[r * N + i];
            want_r[r] = 1.0 / sqrt(ss / N + eps);
            for (int i = 0; i < N; i++) want[r * N + i] = x[r * N + i] * want_r[r] * w[i];
        }
        CHECK(close_to("rms_norm y", y, want, ROWS * N));
        CHECK(close_to("rms_norm rstd", rs, want_r, ROWS));
    }
    cudaFree(dx), cudaFree(dw), cudaFree(dy), cudaFree(dr);
    free(x), free(w), free(y), free(want);
}

static void test_triton_softmax(void) {
    enum { N = 2048 };
    float  *x = malloc(sizeof(float) * ROWS * N), *y = malloc(sizeof(float) * ROWS * N);
    double *want = malloc(sizeof(double) * ROWS * N);
    for (int i = 0; i < ROWS * N; i++) x[i] = 8 * rnd();
    float *dx = dev_from(x, ROWS * N), *dy = dev_from(NULL, ROWS * N);
    void  *args[4] = {&dx, &dy};
    if (triton_launch("t_softmax__float32_2048__sm90", "softmax_fwd", 4, 2, args)) {
        host_from(y, dy, ROWS * N);
        for (int r = 0; r < ROWS; r++) {
            double m = -INFINITY, sum = 0;
            for (int i = 0; i < N; i++) m = fmax(m, x[r * N + i]);
            for (int i = 0; i < N; i++) sum += exp(x[r * N + i] - m);
            for (int i = 0; i < N; i++) want[r * N + i] = exp(x[r * N + i] - m) / sum;
        }
        CHECK(close_to("softmax", y, want, ROWS * N));
    }
    cudaFree(dx), cudaFree(dy);
    free(x), free(y), free(want);
}

static void test_triton_layer_norm(void) {
    enum { N = 1024 };
    float *x = malloc(sizeof(float) * ROWS * N), *y = malloc(sizeof(float) * ROWS * N);
    float  w[N], b[N], mean[ROWS], rs[ROWS];
    double *want = malloc(sizeof(double) * ROWS * N), want_m[ROWS], want_r[ROWS];
    for (int i = 0; i < ROWS * N; i++) x[i] = rnd() + 0.5f;
    for (int i = 0; i < N; i++) w[i] = rnd(), b[i] = rnd();
    float *dx = dev_from(x, ROWS * N), *dw = dev_from(w, N), *db = dev_from(b, N),
          *dy = dev_from(NULL, ROWS * N), *dm = dev_from(NULL, ROWS), *dr = dev_from(NULL, ROWS);
    float eps = 1e-5f;
    void *args[9] = {&dx, &dw, &db, &dy, &dm, &dr, &eps};
    if (triton_launch("t_ln__float32_1024__sm90", "layer_norm_fwd", 4, 7, args)) {
        host_from(y, dy, ROWS * N);
        host_from(mean, dm, ROWS);
        host_from(rs, dr, ROWS);
        for (int r = 0; r < ROWS; r++) {
            double mu = 0, var = 0;
            for (int i = 0; i < N; i++) mu += x[r * N + i];
            mu /= N;
            for (int i = 0; i < N; i++) var += (x[r * N + i] - mu) * (x[r * N + i] - mu);
            want_m[r] = mu;
            want_r[r] = 1.0 / sqrt(var / N + eps);
            for (int i = 0; i < N; i++)
                want[r * N + i] = (x[r * N + i] - mu) * want_r[r] * w[i] + b[i];
        }
        CHECK(close_to("layer_norm y", y, want, ROWS * N));
        CHECK(close_to("layer_norm mean", mean, want_m, ROWS));
        CHECK(close_to("layer_norm rstd", rs, want_r, ROWS));
    }
    cudaFree(dx), cudaFree(dw), cudaFree(db), cudaFree(dy), cudaFree(dm), cudaFree(dr);
    free(x), free(y), free(want);
}

static void test_triton_add_rms(void) {
    enum { N = 1024 };
    float  *x = malloc(sizeof(float) * ROWS * N), *res = malloc(sizeof(float) * ROWS * N);
    float  *y = malloc(sizeof(float) * ROWS * N), *sum = malloc(sizeof(float) * ROWS * N), w[N];
    double *want = malloc(sizeof(double) * ROWS * N), *want_s = malloc(sizeof(double) * ROWS * N);
    for (int i = 0; i < ROWS * N; i++) x[i] = rnd(), res[i] = rnd();
    for (int i = 0; i < N; i++) w[i] = rnd();
    float *dx = dev_from(x, ROWS * N), *dres = dev_from(res, ROWS * N), *dw = dev_from(w, N),
          *dy = dev_from(NULL, ROWS * N), *ds = dev_from(NULL, ROWS * N);
    float eps = 1e-6f;
    void *args[8] = {&dx, &dres, &dw, &dy, &ds, &eps};
    if (triton_launch("t_add_rms__float32_1024__sm90", "add_rms_norm_fwd", 4, 6, args)) {
        host_from(y, dy, ROWS * N);
        host_from(sum, ds, ROWS * N);
        for (int r = 0; r < ROWS; r++) {
            double ss = 0;
            for (int i = 0; i < N; i++) {
                float s = x[r * N + i] + res[r * N + i]; /* rounded, as the kernel writes it */
                want_s[r * N + i] = s;
                ss += (double)s * s;
            }
            double rstd = 1.0 / sqrt(ss / N + eps);
            for (int i = 0; i < N; i++) want[r * N + i] = want_s[r * N + i] * rstd * w[i];
        }
        CHECK(close_to("add_rms_norm sum", sum, want_s, ROWS * N));
        CHECK(close_to("add_rms_norm y", y, want, ROWS * N));
    }
    cudaFree(dx), cudaFree(dres), cudaFree(dw), cudaFree(dy), cudaFree(ds);
    free(x), free(res), free(y), free(sum), free(want), free(want_s);
}

static void test_triton(void) {
    if (cc != 90) {
        printf("test_rt_dsl_cuda: the Triton test artifacts are for sm_90; cuda:0 is sm_%d\n", cc);
        return;
    }
    test_triton_rms();
    test_triton_softmax();
    test_triton_layer_norm();
    test_triton_add_rms();
}
#else
static void test_triton(void) {
    printf("test_rt_dsl_cuda: this build exported no Triton artifacts (no pinned Triton: "
           "bash cmake/do deps); the Triton cases are left out\n");
}
#endif

int main(void) {
    const char *why = "";
    if (!sg_cuda_available(&why)) SKIP("test_rt_dsl_cuda: %s", why);
    cc = sg_dsl_capability(0);
    CHECK(cc > 0);
    char name[64];
    snprintf(name, sizeof name, "sm%d.cubin", cc);
    good = read_file(name, &good_n);
    if (!good)
        SKIP("test_rt_dsl_cuda: no test cubin for cuda:0's capability sm_%d in %s (cmake/dsl.cmake "
             "builds sm_90 and sm_80)", cc, SG_DSL_TEST_CUBINS);
    other = read_file(cc == 80 ? "sm90.cubin" : "sm80.cubin", &other_n);
    CHECK(other != NULL);
    if (!other) return check_result("test_rt_dsl_cuda");
    CHECK(sg_cuda_set_device(0) == SG_OK);
    test_one_load();
    test_launch();
    test_failures();
    test_shared();
    test_capture();
    test_preload();
    test_objects();
    test_second_device();
    test_triton();
    return check_result("test_rt_dsl_cuda");
}

#endif
