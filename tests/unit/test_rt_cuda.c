/* test_rt_cuda.c: the CUDA backend (runtime/cuda.c, sg_cuda.h).
 *
 * Without a GPU, or in a build without CUDA: the backend says it is unavailable and why, and
 * CUDA tensors fail with SG_EDEVICE and that reason; then the test skips. With a GPU: empty and
 * zeros on cuda:0, copies through the device implementation and through sg_tensor_copy_ and
 * sg_tensor_to, values read back on the host, the per-thread device and stream, allocation on a
 * user stream, the memory pool's setting, out-of-range devices and an allocation too large, and
 * the generic device guard, streams and events (sg_backend.h) served by CUDA's hooks. */
#include "check.h"
#include "rt_internal.h"
#include "sg_backend.h"
#include "sg_cuda.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#ifdef SG_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

enum { N = 1000 };

static const int64_t sizes[2] = {10, 100}; /* N elements */

static bool contains(const char *s, const char *part) { return s && part && strstr(s, part); }

/* ---- without a GPU ---------------------------------------------------------------------- */

static void test_unavailable(const char *why) {
    CHECK(why && why[0]);
    const char *why2 = NULL;
    CHECK(sg_device_count(SG_DEV_CUDA, &why2) == 0);
    CHECK_STR(why2, why);
    CHECK(sg_cuda_device_count() == 0);
    CHECK(sg_cuda_current_device() == -1);
    CHECK(sg_cuda_current_stream() == NULL);
    CHECK(sg_cuda_set_device(0) == SG_EDEVICE);
    CHECK(sg_cuda_set_stream(NULL) == SG_EDEVICE);
    CHECK(sg_cuda_synchronize() == SG_EDEVICE);

    sg_tensor *t = NULL;
    CHECK(sg_tensor_empty(sizes, 2, SG_FLOAT32, SG_CUDA(0), &t) == SG_EDEVICE);
    CHECK(t == NULL);
    CHECK(contains(sg_last_error(), "cuda"));
    CHECK(contains(sg_last_error(), why));
    CHECK(sg_tensor_zeros(sizes, 2, SG_FLOAT32, SG_CUDA(0), &t) == SG_EDEVICE);
    CHECK(sg_device_check(SG_CUDA(0)) == SG_EDEVICE);
    /* no GPU: said plainly (a build with CUDA), not as a driver-version problem */
    CHECK(contains(sg_last_error(), "no CUDA device is present") ||
          contains(sg_last_error(), "this build has no CUDA support"));
    /* the generic calls say the same */
    sg_event *ev = NULL;
    CHECK(sg_device_synchronize(SG_CUDA(0)) == SG_EDEVICE);
    CHECK(contains(sg_last_error(), "sg_device_synchronize: cuda:0: "));
    CHECK(contains(sg_last_error(), why));
    CHECK(sg_event_create(SG_CUDA(0), &ev) == SG_EDEVICE && ev == NULL);
    CHECK(sg_device_set_current(SG_CUDA(0)) == SG_EDEVICE);
    /* the CPU still works */
    CHECK(sg_tensor_empty(sizes, 2, SG_FLOAT32, SG_CPU, &t) == SG_OK);
    sg_tensor_release(t);
}

#ifdef SG_HAVE_CUDA

/* ---- with a GPU ------------------------------------------------------------------------- */

/* A CPU float32 tensor of N elements holding base, base+1, ... */
static sg_tensor *host_ramp(float base) {
    sg_tensor *t = NULL;
    if (sg_tensor_empty(sizes, 2, SG_FLOAT32, SG_CPU, &t)) return NULL;
    float *p = sg_tensor_data(t);
    for (int i = 0; i < N; i++) p[i] = base + (float)i;
    return t;
}

static bool is_ramp(const float *p, float base) {
    for (int i = 0; i < N; i++)
        if (p[i] != base + (float)i) return false;
    return true;
}

/* The N floats of a CUDA tensor, read through the device implementation. */
static bool read_back(const sg_tensor *t, float *out) {
    const sg_device_impl *impl = sg__device_impl(SG_DEV_CUDA);
    return impl->copy_to_host(out, t->device, sg_tensor_data(t), N * sizeof(float)) == SG_OK;
}

static void test_basics(int ndev) {
    const char *why = "unset";
    CHECK(sg_cuda_available(&why));
    CHECK_STR(why, "unset"); /* left alone where available */
    CHECK(sg_cuda_device_count() == ndev);
    CHECK(sg_device_count(SG_DEV_CUDA, NULL) == ndev);
    CHECK(sg_device_check(SG_CUDA(0)) == SG_OK);
    CHECK(sg_cuda_current_device() == 0);
    CHECK(sg_cuda_current_stream() == NULL);
    CHECK(sg_cuda_synchronize() == SG_OK);

    const sg_device_impl *impl = sg__device_impl(SG_DEV_CUDA);
    CHECK(impl && impl == sg__cuda_impl());
    CHECK_STR(impl->name, "cuda");
    CHECK(impl->copy_device && impl->memset_zero);
}

static void test_out_of_range(int ndev) {
    sg_tensor *t = NULL;
    CHECK(sg_tensor_empty(sizes, 2, SG_FLOAT32, SG_CUDA(ndev), &t) == SG_EDEVICE);
    CHECK(t == NULL);
    CHECK(contains(sg_last_error(), "does not exist"));
    CHECK(sg_tensor_empty(sizes, 2, SG_FLOAT32, SG_CUDA(-1), &t) == SG_EDEVICE);
    CHECK(sg_cuda_set_device(ndev) == SG_EDEVICE);
    CHECK(contains(sg_last_error(), "does not exist"));
    CHECK(sg_cuda_set_device(-1) == SG_EDEVICE);
    CHECK(sg_cuda_current_device() == 0); /* unchanged */
}

/* empty and zeros, and the impl's copies both ways and within the device. */
static void test_impl_copies(void) {
    const sg_device_impl *impl = sg__device_impl(SG_DEV_CUDA);
    sg_tensor            *e = NULL, *z = NULL, *h = host_ramp(1.0f);
    static float          back[N];

    CHECK(sg_tensor_empty(sizes, 2, SG_FLOAT32, SG_CUDA(0), &e) == SG_OK);
    CHECK(sg_tensor_zeros(sizes, 2, SG_FLOAT32, SG_CUDA(0), &z) == SG_OK);
    if (!e || !z || !h) {
        CHECK(!"cannot create the tensors");
        goto done;
    }
    CHECK(sg_device_eq(e->device, SG_CUDA(0)) && sg_device_eq(z->device, SG_CUDA(0)));
    CHECK(e->storage->data != NULL && e->storage->nbytes == N * sizeof(float));
    CHECK(sg__cuda_storage_stream(e->storage) == NULL); /* on the legacy default stream */

    memset(back, 0xff, sizeof back);
    CHECK(read_back(z, back));
    bool zero = true;
    for (int i = 0; i < N; i++) zero &= back[i] == 0.0f;
    CHECK(zero);

    CHECK(impl->copy_from_host(e->device, sg_tensor_data(e), sg_tensor_data(h),
                               N * sizeof(float)) == SG_OK);
    CHECK(read_back(e, back) && is_ramp(back, 1.0f));
    /* device to device: e into z */
    CHECK(impl->copy_device(z->device, sg_tensor_data(z), e->device, sg_tensor_data(e),
                            N * sizeof(float)) == SG_OK);
    memset(back, 0, sizeof back);
    CHECK(read_back(z, back) && is_ramp(back, 1.0f));
    /* zeroing again through the impl */
    CHECK(impl->memset_zero(z->device, sg_tensor_data(z), N * sizeof(float)) == SG_OK);
    CHECK(read_back(z, back) && back[0] == 0.0f && back[N - 1] == 0.0f);

    /* zero elements: no memory, and nothing to copy */
    sg_tensor    *empty0 = NULL;
    const int64_t zero_sizes[1] = {0};
    CHECK(sg_tensor_zeros(zero_sizes, 1, SG_FLOAT32, SG_CUDA(0), &empty0) == SG_OK);
    CHECK(empty0 && empty0->storage->data == NULL);
    sg_tensor_release(empty0);

done:
    sg_tensor_release(e);
    sg_tensor_release(z);
    sg_tensor_release(h);
}

/* Copies through the tensor API (runtime/copy.c), over the device implementation. */
static void test_tensor_copies(void) {
    sg_tensor    *h = host_ramp(7.0f), *d = NULL, *d2 = NULL, *z = NULL, *back = NULL;
    static float  buf[N];

    CHECK(sg_tensor_to(h, SG_CUDA(0), &d) == SG_OK);
    if (!d) {
        CHECK(!"sg_tensor_to cuda:0 failed");
        goto done;
    }
    CHECK(sg_device_eq(d->device, SG_CUDA(0)));
    CHECK(d->ndim == 2 && d->sizes[0] == sizes[0] && d->sizes[1] == sizes[1]);
    CHECK(read_back(d, buf) && is_ramp(buf, 7.0f));
    CHECK(sg_tensor_to(d, SG_CUDA(0), &d2) == SG_OK && d2 == d); /* there already */
    sg_tensor_release(d2);

    CHECK(sg_tensor_to(d, SG_CPU, &back) == SG_OK);
    CHECK(back && sg_device_eq(back->device, SG_CPU) && is_ramp(sg_tensor_data(back), 7.0f));

    /* copy_ host -> device, device -> device, device -> host */
    CHECK(sg_tensor_zeros(sizes, 2, SG_FLOAT32, SG_CUDA(0), &z) == SG_OK);
    sg_tensor *h2 = host_ramp(-3.0f);
    CHECK(z && h2 && sg_tensor_copy_(z, h2) == SG_OK);
    CHECK(read_back(z, buf) && is_ramp(buf, -3.0f));
    CHECK(sg_tensor_copy_(d, z) == SG_OK);
    CHECK(read_back(d, buf) && is_ramp(buf, -3.0f));
    memset(sg_tensor_data(back), 0, N * sizeof(float));
    CHECK(sg_tensor_copy_(back, d) == SG_OK && is_ramp(sg_tensor_data(back), -3.0f));
    sg_tensor_release(h2);

done:
    sg_tensor_release(h);
    sg_tensor_release(d);
    sg_tensor_release(z);
    sg_tensor_release(back);
}

/* Memory goes back to a pool that keeps it (release threshold UINT64_MAX). */
static void test_pool(void) {
    cudaMemPool_t pool;
    uint64_t      threshold = 0;
    CHECK(cudaDeviceGetDefaultMemPool(&pool, 0) == cudaSuccess);
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold) ==
          cudaSuccess);
    CHECK(threshold == UINT64_MAX);

    /* far more than any GPU holds: SG_ENOMEM, and the device is still usable after */
    sg_tensor    *t = NULL;
    const int64_t huge[1] = {INT64_C(1) << 48}; /* 1 PiB of float32 */
    CHECK(sg_tensor_empty(huge, 1, SG_FLOAT32, SG_CUDA(0), &t) == SG_ENOMEM);
    CHECK(t == NULL);
    CHECK(contains(sg_last_error(), "cuda:0"));
    CHECK(cudaGetLastError() == cudaSuccess); /* the failure was cleared */
    CHECK(sg_tensor_zeros(sizes, 2, SG_FLOAT32, SG_CUDA(0), &t) == SG_OK);
    sg_tensor_release(t);
}

/* Freed blocks are reused by the same thread for the same stream and size class, never for
 * another stream; past the thread's total the oldest go back to the pool. */
static void test_block_cache(void) {
    const int64_t small[1] = {1000}, other[1] = {5000}, big[1] = {1 << 20}; /* floats */
    sg_tensor    *a = NULL, *b = NULL;
    CHECK(sg_tensor_empty(small, 1, SG_FLOAT32, SG_CUDA(0), &a) == SG_OK);
    void *p = a ? a->storage->data : NULL;
    sg_tensor_release(a);
    CHECK(sg_tensor_empty(small, 1, SG_FLOAT32, SG_CUDA(0), &a) == SG_OK);
    CHECK(a && a->storage->data == p); /* the same block, with no call into CUDA */
    CHECK(sg_tensor_empty(other, 1, SG_FLOAT32, SG_CUDA(0), &b) == SG_OK);
    CHECK(b && b->storage->data != p); /* another size class */
    sg_tensor_release(b);
    sg_tensor_release(a);

    cudaStream_t s;
    CHECK(cudaStreamCreate(&s) == cudaSuccess);
    CHECK(sg_cuda_set_stream(s) == SG_OK);
    CHECK(sg_tensor_empty(small, 1, SG_FLOAT32, SG_CUDA(0), &a) == SG_OK);
    CHECK(a && sg__cuda_storage_stream(a->storage) == (void *)s);
    void *q = a ? a->storage->data : NULL;
    sg_tensor_release(a);
    CHECK(sg_cuda_set_stream(NULL) == SG_OK); /* gives s's cached block back to the pool */
    CHECK(cudaStreamSynchronize(s) == cudaSuccess && cudaStreamDestroy(s) == cudaSuccess);
    CHECK(sg_tensor_empty(small, 1, SG_FLOAT32, SG_CUDA(0), &a) == SG_OK);
    CHECK(a && sg__cuda_storage_stream(a->storage) == NULL);
    (void)q;
    sg_tensor_release(a);

    /* 4 MiB: kept too (a product's output goes through no cudaMallocAsync) */
    CHECK(sg_tensor_empty(big, 1, SG_FLOAT32, SG_CUDA(0), &a) == SG_OK);
    void *r = a ? a->storage->data : NULL;
    sg_tensor_release(a);
    CHECK(sg_tensor_empty(big, 1, SG_FLOAT32, SG_CUDA(0), &a) == SG_OK);
    CHECK(a && a->storage->data == r);
    sg_tensor_release(a);
    /* more than a thread keeps in all: the oldest blocks go back, and every block still serves */
    const int64_t huge[1] = {(int64_t)200 << 18}; /* 200 MiB of floats */
    sg_tensor    *h[6] = {NULL};
    for (int i = 0; i < 6; i++) CHECK(sg_tensor_empty(huge, 1, SG_FLOAT32, SG_CUDA(0), &h[i]) == SG_OK);
    for (int i = 0; i < 6; i++) sg_tensor_release(h[i]);
    for (int i = 0; i < 6; i++) CHECK(sg_tensor_empty(huge, 1, SG_FLOAT32, SG_CUDA(0), &h[i]) == SG_OK);
    for (int i = 0; i < 6; i++) sg_tensor_release(h[i]);
    CHECK(sg_cuda_synchronize() == SG_OK);
}

/* Allocation, copies and zeroing on a user stream; freed while the stream still exists. */
static void test_user_stream(void) {
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s) == cudaSuccess);
    CHECK(sg_cuda_set_stream(s) == SG_OK);
    CHECK(sg_cuda_current_stream() == (void *)s);

    sg_tensor   *z = NULL, *h = host_ramp(5.0f);
    static float buf[N];
    CHECK(sg_tensor_zeros(sizes, 2, SG_FLOAT32, SG_CUDA(0), &z) == SG_OK);
    if (z && h) {
        CHECK(sg__cuda_storage_stream(z->storage) == (void *)s); /* freed on the one it came from */
        CHECK(read_back(z, buf) && buf[0] == 0.0f && buf[N - 1] == 0.0f);
        const sg_device_impl *impl = sg__device_impl(SG_DEV_CUDA);
        CHECK(impl->copy_from_host(z->device, sg_tensor_data(z), sg_tensor_data(h),
                                   N * sizeof(float)) == SG_OK);
        CHECK(read_back(z, buf) && is_ramp(buf, 5.0f));
    }
    sg_tensor_release(z);
    sg_tensor_release(h);
    CHECK(sg_cuda_synchronize() == SG_OK);

    CHECK(sg_cuda_set_stream(NULL) == SG_OK);
    CHECK(sg_cuda_current_stream() == NULL);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess);
    CHECK(cudaStreamDestroy(s) == cudaSuccess);
}

/* ---- per-thread state ------------------------------------------------------------------- */

struct seen {
    int   device;
    void *stream;
    void *stream_after;
    int   ok;
};

/* A second thread starts on device 0 with the default stream, whatever the first chose, and
 * what it sets stays its own. */
static void *other_thread(void *arg) {
    struct seen *seen = arg;
    seen->device = sg_cuda_current_device();
    seen->stream = sg_cuda_current_stream();
    cudaStream_t s;
    if (cudaStreamCreate(&s) != cudaSuccess) return NULL;
    seen->ok = sg_cuda_set_stream(s) == SG_OK;
    seen->stream_after = sg_cuda_current_stream() == (void *)s ? (void *)s : NULL;
    sg_tensor *t = NULL;
    seen->ok &= sg_tensor_zeros(sizes, 2, SG_FLOAT32, SG_CUDA(0), &t) == SG_OK;
    seen->ok &= t && sg__cuda_storage_stream(t->storage) == (void *)s;
    sg_tensor_release(t);
    seen->ok &= sg_cuda_set_stream(NULL) == SG_OK;
    seen->ok &= cudaStreamSynchronize(s) == cudaSuccess && cudaStreamDestroy(s) == cudaSuccess;
    return NULL;
}

static void test_threads(int ndev) {
    cudaStream_t mine;
    CHECK(cudaStreamCreate(&mine) == cudaSuccess);
    CHECK(sg_cuda_set_stream(mine) == SG_OK);
    int my_dev = 0;
    if (ndev > 1) {
        /* the stream belongs to cuda:0: not a stream for cuda:1 */
        CHECK(sg_cuda_set_device(1) == SG_OK);
        CHECK(sg_cuda_current_device() == 1);
        CHECK(sg_cuda_current_stream() == NULL); /* streams are per device */
        CHECK(sg_cuda_set_stream(mine) == SG_EINVAL);
        my_dev = 1;
    }

    struct seen seen = {-2, (void *)1, NULL, 0};
    pthread_t   th;
    CHECK(pthread_create(&th, NULL, other_thread, &seen) == 0);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK(seen.device == 0);
    CHECK(seen.stream == NULL);
    CHECK(seen.stream_after != NULL);
    CHECK(seen.ok);

    /* this thread's state is untouched by the other's */
    CHECK(sg_cuda_current_device() == my_dev);
    CHECK(sg_cuda_set_device(0) == SG_OK);
    CHECK(sg_cuda_current_stream() == (void *)mine);
    CHECK(sg_cuda_set_stream(NULL) == SG_OK);
    CHECK(cudaStreamDestroy(mine) == cudaSuccess);
}

/* Between two GPUs (where there are two). */
static void test_peer(int ndev) {
    if (ndev < 2) return;
    sg_tensor   *a = NULL, *b = NULL, *h = host_ramp(2.0f);
    static float buf[N];
    const sg_device_impl *impl = sg__device_impl(SG_DEV_CUDA);
    CHECK(sg_tensor_to(h, SG_CUDA(0), &a) == SG_OK);
    CHECK(sg_tensor_zeros(sizes, 2, SG_FLOAT32, SG_CUDA(1), &b) == SG_OK);
    if (a && b) {
        CHECK(impl->copy_device(b->device, sg_tensor_data(b), a->device, sg_tensor_data(a),
                                N * sizeof(float)) == SG_OK);
        CHECK(read_back(b, buf) && is_ramp(buf, 2.0f));
        CHECK(sg_cuda_current_device() == 0); /* restored */
    }
    sg_tensor_release(a);
    sg_tensor_release(b);
    sg_tensor_release(h);
}

/* The generic calls of sg_backend.h reach CUDA's hooks and agree with sg_cuda.h. */
static void test_generic_hooks(int ndev) {
    sg_device d;
    CHECK(sg_device_set_current(SG_CUDA(ndev - 1)) == SG_OK);
    CHECK(sg_device_current(SG_DEV_CUDA, &d) == SG_OK && sg_device_eq(d, SG_CUDA(ndev - 1)));
    CHECK(sg_cuda_current_device() == ndev - 1);
    CHECK(sg_device_parse("cuda", &d) == SG_OK && d.index == ndev - 1);
    sg_device_guard g;
    CHECK(sg_device_guard_enter(&g, SG_CUDA(0)) == SG_OK && sg_cuda_current_device() == 0);
    sg_device_guard_exit(&g);
    CHECK(sg_cuda_current_device() == ndev - 1);
    CHECK(sg_device_set_current(SG_CUDA(0)) == SG_OK);
    CHECK(sg_device_set_current(SG_CUDA(ndev)) == SG_EDEVICE);

    cudaStream_t s;
    void        *got = NULL;
    CHECK(cudaStreamCreate(&s) == cudaSuccess);
    CHECK(sg_stream_set(SG_CUDA(0), s) == SG_OK && sg_cuda_current_stream() == (void *)s);
    CHECK(sg_stream_current(SG_CUDA(0), &got) == SG_OK && got == (void *)s);

    /* an event recorded after a copy on s, waited for by the host */
    sg_tensor *h = host_ramp(1.0f), *z = NULL;
    sg_event  *ev = NULL;
    bool       done = false;
    CHECK(sg_tensor_to(h, SG_CUDA(0), &z) == SG_OK);
    CHECK(sg_event_create(SG_CUDA(0), &ev) == SG_OK && ev);
    CHECK(sg_event_record(ev) == SG_OK);
    CHECK(sg_event_wait(ev, SG_CUDA(0)) == SG_OK);
    CHECK(sg_event_synchronize(ev) == SG_OK);
    CHECK(sg_event_query(ev, &done) == SG_OK && done);
    CHECK(sg_device_synchronize(SG_CUDA(0)) == SG_OK);
    sg_event_destroy(ev);
    sg_tensor_release(z);
    sg_tensor_release(h);
    CHECK(sg_stream_set(SG_CUDA(0), NULL) == SG_OK && sg_cuda_current_stream() == NULL);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess && cudaStreamDestroy(s) == cudaSuccess);
}

#endif /* SG_HAVE_CUDA */

int main(void) {
    const char *why = NULL;
    if (!sg_cuda_available(&why)) {
        test_unavailable(why);
        if (check_failures) return check_result("test_rt_cuda");
        SKIP("no CUDA device: %s", why);
    }
#ifdef SG_HAVE_CUDA
    int ndev = sg_cuda_device_count();
    test_basics(ndev);
    test_out_of_range(ndev);
    test_impl_copies();
    test_tensor_copies();
    test_pool();
    test_block_cache();
    test_user_stream();
    test_threads(ndev);
    test_peer(ndev);
    test_generic_hooks(ndev);
#endif
    return check_result("test_rt_cuda");
}
