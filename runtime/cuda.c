/* cuda.c: the CUDA backend: finding devices, the per-thread current device and streams, memory
 * from CUDA's stream-ordered pool, and copies (sg_device_impl for SG_DEV_CUDA, and sg_cuda.h).
 *
 * Built with SG_HAVE_CUDA where cmake/cuda.cmake finds the toolkit, against the static CUDA
 * runtime, which loads the driver only when first called: the library loads everywhere, and on
 * a machine without a driver or GPU the backend counts 0 devices and says why. Without
 * SG_HAVE_CUDA the same entry points exist and report "this build has no CUDA support".
 *
 * Nothing here prints or aborts: every CUDA error becomes an sg_error naming the operation and
 * the device, with CUDA's own text after a colon.
 */
#include "rt_internal.h"
#include "sg_cuda.h"

#define NO_CUDA "this build has no CUDA support"

#ifdef SG_HAVE_CUDA

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rationale: sg_device.index is an int8_t, so no tensor can name a device past 127; the
 * per-device tables below are sized for that and the count is capped to it. */
enum { MAX_DEVICES = 128 };

/* ---- finding devices (once per process) ------------------------------------------------- */

static pthread_once_t count_once = PTHREAD_ONCE_INIT;
static bool           devices_found; /* atomic: find_devices has run */
static int            dev_count;
static const char    *dev_why = "";

static char why_buf[256];

/* Rationale: on a machine without a GPU the CUDA runtime answers "CUDA driver version is
 * insufficient for CUDA runtime version" (no driver library is installed there at all), which
 * sends a user hunting for a driver update. Where no driver is installed, or the driver sees no
 * device, the message says plainly that no CUDA device is present, with CUDA's text after it. */
static void find_devices(void) {
    int         n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
        (void)cudaGetLastError(); /* keep the failure out of later cudaGetLastError calls */
        int  driver = -1;
        bool no_driver = cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0;
        (void)cudaGetLastError();
        if (err == cudaErrorNoDevice || no_driver)
            snprintf(why_buf, sizeof why_buf, "no CUDA device is present (%sCUDA says: %s)",
                     no_driver ? "no CUDA driver is installed; " : "", cudaGetErrorString(err));
        else
            snprintf(why_buf, sizeof why_buf, "CUDA could not be initialised: %s",
                     cudaGetErrorString(err));
        dev_why = why_buf;
        n = 0;
    } else if (n == 0) {
        dev_why = "no CUDA device is present";
    }
    dev_count = n > MAX_DEVICES ? MAX_DEVICES : n;
    __atomic_store_n(&devices_found, true, __ATOMIC_RELEASE);
}

/* The number of devices; where 0, *why (if given) says why. */
static int cuda_count(const char **why) {
    /* Rationale: every allocation and stream lookup asks, some twice; once the devices are
     * found a load answers, where pthread_once is a call into the C library each time */
    if (SG_UNLIKELY(!__atomic_load_n(&devices_found, __ATOMIC_ACQUIRE)))
        pthread_once(&count_once, find_devices);
    if (why && dev_count == 0) *why = dev_why;
    return dev_count;
}

/* ---- errors ----------------------------------------------------------------------------- */

/* Records "<context>: <CUDA's text>" with SG_ENOMEM for an allocation failure and SG_EDEVICE
 * otherwise, and clears CUDA's per-thread record of err so that it does not resurface in a
 * later, unrelated cudaGetLastError (sticky errors, which poison the context, stay). */
static sg_status fail(cudaError_t err, const char *fmt, ...) SG_PRINTF(2, 3);
static sg_status fail(cudaError_t err, const char *fmt, ...) {
    char    ctx[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx, sizeof ctx, fmt, ap);
    va_end(ap);
    (void)cudaGetLastError();
    return sg_error(err == cudaErrorMemoryAllocation ? SG_ENOMEM : SG_EDEVICE, "%s: %s", ctx,
                    cudaGetErrorString(err));
}

/* SG_OK where index names a device found; the impl's entries are reached with devices of
 * existing tensors, but sg_tensor_from_blob lets a caller name any index. */
static sg_status check_index(int index, const char *op) {
    const char *why = "";
    int         n = cuda_count(&why);
    if (n == 0) return sg_error(SG_EDEVICE, "%s: CUDA is unavailable: %s", op, why);
    if (index < 0 || index >= n)
        return sg_error(SG_EDEVICE, "%s: device cuda:%d does not exist (%d CUDA device%s found)",
                        op, index, n, n == 1 ? "" : "s");
    return SG_OK;
}

/* ---- per-thread state ------------------------------------------------------------------- */

/* The calling thread's current stream of each device; NULL is the legacy default stream.
 * Rationale: the current device needs no slot of ours: CUDA keeps it per host thread already
 * (cudaSetDevice), and reading it there keeps code that calls CUDA directly in agreement. */
static _Thread_local cudaStream_t cur_stream[MAX_DEVICES];

/* Makes `device` the thread's current device, leaving in *prev the one to restore. */
static cudaError_t switch_to(int device, int *prev) {
    cudaError_t err = cudaGetDevice(prev);
    if (err == cudaSuccess && *prev != device) err = cudaSetDevice(device);
    return err;
}

static void restore(int device, int prev) {
    if (prev != device) (void)cudaSetDevice(prev);
}

/* The thread's current device, checked against the devices found. */
static sg_status current(int *device, const char *op) {
    cudaError_t err = cudaGetDevice(device);
    if (err != cudaSuccess) return fail(err, "%s: cannot read the current CUDA device", op);
    return check_index(*device, op);
}

/* ---- memory ----------------------------------------------------------------------------- */

/* Whether each device's default pool has been set up (written with atomics; setting it up
 * twice, where two threads race, is harmless). */
static unsigned char pool_ready[MAX_DEVICES];

/* Rationale: a pool's release threshold is 0 by default, so every synchronisation hands the
 * pool's free memory back to the driver and the next allocation pays for cudaMalloc again.
 * UINT64_MAX keeps freed memory in the pool for reuse, which is what a caching allocator
 * (PyTorch's) does; cudaDeviceGetDefaultMemPool + cudaMemPoolTrimTo gives it back on demand. */
static sg_status pool_init(int device) {
    if (__atomic_load_n(&pool_ready[device], __ATOMIC_ACQUIRE)) return SG_OK;
    cudaMemPool_t pool;
    uint64_t      keep = UINT64_MAX;
    cudaError_t   err = cudaDeviceGetDefaultMemPool(&pool, device);
    if (err == cudaSuccess)
        err = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    if (err != cudaSuccess)
        return fail(err, "cannot set up the memory pool of cuda:%d", device);
    __atomic_store_n(&pool_ready[device], 1, __ATOMIC_RELEASE);
    return SG_OK;
}

/* A block's record (the storage's ctx): the stream it belongs to, freed on, and its size. */
typedef struct block {
    cudaStream_t stream;
    size_t       bytes; /* rounded up to BLOCK_ROUND */
    int          device;
} block;

/* ---- a per-thread cache of freed blocks ---------------------------------------------------
 * Rationale: cudaMallocAsync and cudaFreeAsync cost host time on every op, and the pair costs
 * the stream GPU time as well, whatever the block's size (docs/perf.md, "gemm"). Work on one
 * stream runs in order, so a block freed on stream S may serve the next allocation on S at once, with no
 * call into CUDA (as PyTorch's caching allocator reuses blocks per stream). Each thread keeps a
 * few freed blocks of up to CACHE_MAX_BYTES, CACHE_TOTAL_BYTES in all (the oldest go back
 * first); one is reused for a request of its device, stream and size class. They go back to
 * the pool at thread exit, when the thread's stream changes, and at sg_runtime_shutdown. */
enum { BLOCK_ROUND = 512, CACHE_SLOTS = 16 };
#define CACHE_MAX_BYTES   ((size_t)256 << 20)
#define CACHE_TOTAL_BYTES ((size_t)1 << 30)

typedef struct cached {
    void  *data;
    block *rec;
} cached;

static _Thread_local cached tcache[CACHE_SLOTS];
static _Thread_local int    tcache_n;
static _Thread_local size_t tcache_bytes; /* the blocks' bytes */
static _Thread_local bool   tcache_keyed; /* the key holds the thread's cache */
static pthread_key_t        tcache_key;
static pthread_once_t       tcache_once = PTHREAD_ONCE_INIT;

static void release_block(void *data, block *rec) {
    int prev;
    if (switch_to(rec->device, &prev) == cudaSuccess) {
        if (cudaFreeAsync(data, rec->stream) != cudaSuccess) (void)cudaGetLastError();
        restore(rec->device, prev);
    } else {
        (void)cudaGetLastError();
    }
    free(rec);
}

static void tcache_flush(void) {
    while (tcache_n > 0) {
        cached c = tcache[--tcache_n];
        release_block(c.data, c.rec);
    }
    tcache_bytes = 0;
}

/* The oldest kept block back to the pool. */
static void tcache_drop_oldest(void) {
    cached old = tcache[0];
    memmove(tcache, tcache + 1, (size_t)(tcache_n - 1) * sizeof *tcache);
    tcache_n--;
    tcache_bytes -= old.rec->bytes;
    release_block(old.data, old.rec);
}

/* Rationale: pthread clears the key before calling this, so a block freed by a later
 * destructor sets it again (tcache_keyed false) and this runs once more. */
static void tcache_at_exit(void *unused) {
    (void)unused;
    tcache_keyed = false;
    tcache_flush();
}

static void tcache_key_init(void) { (void)pthread_key_create(&tcache_key, tcache_at_exit); }

void sg__cuda_cache_flush(void) { tcache_flush(); }

void *sg__cuda_storage_stream(const sg_storage *s) {
    const block *rec = s->ctx;
    return s->device.type == SG_DEV_CUDA && s->data && rec ? (void *)rec->stream : NULL;
}

/* Memory on the thread's current stream of dev; *ctx is its record (its stream, to free it
 * on). Zero bytes get no memory (data NULL), as with cudaMalloc. */
static sg_status cuda_alloc(sg_device dev, size_t nbytes, void **data, void **ctx) {
    *data = NULL;
    *ctx = NULL;
    sg_status st = check_index(dev.index, "cuda alloc");
    if (st || nbytes == 0) return st;
    cudaStream_t stream = cur_stream[dev.index];
    size_t       bytes = (nbytes + BLOCK_ROUND - 1) / BLOCK_ROUND * BLOCK_ROUND;
    if (bytes <= CACHE_MAX_BYTES)
        for (int i = tcache_n - 1; i >= 0; i--) {
            block *r = tcache[i].rec;
            if (r->bytes == bytes && r->stream == stream && r->device == dev.index) {
                *data = tcache[i].data;
                *ctx = r;
                tcache[i] = tcache[--tcache_n];
                tcache_bytes -= bytes;
                return SG_OK;
            }
        }
    block *rec = malloc(sizeof *rec);
    if (!rec) return sg_error(SG_ENOMEM, "cuda alloc: out of host memory");
    *rec = (block){stream, bytes, dev.index};
    int         prev;
    cudaError_t err = switch_to(dev.index, &prev);
    if (err != cudaSuccess) {
        free(rec);
        return fail(err, "cuda alloc: cannot make cuda:%d current", dev.index);
    }
    if (!(st = pool_init(dev.index))) {
        err = cudaMallocAsync(data, bytes, stream);
        if (err == cudaErrorMemoryAllocation && tcache_n > 0) {
            /* the blocks this thread keeps may be what is missing: back to the pool, once */
            (void)cudaGetLastError();
            tcache_flush();
            err = cudaMallocAsync(data, bytes, stream);
        }
        if (err != cudaSuccess) {
            *data = NULL;
            st = fail(err, "cannot allocate %zu bytes on cuda:%d (cudaMallocAsync)", nbytes,
                      dev.index);
        }
    }
    restore(dev.index, prev);
    if (st) {
        free(rec);
        return st;
    }
    *ctx = rec;
    return SG_OK;
}

/* Frees on the stream the memory was allocated on, so work queued there that still uses it
 * finishes first (or keeps a small block for that stream's next allocation). Errors cannot be
 * reported (free returns nothing, and must not overwrite the thread's error message while a
 * caller cleans up after another failure): CUDA's record of them is cleared. After CUDA has
 * shut down at exit the calls fail and nothing is freed. */
static void cuda_free(sg_device dev, void *data, void *ctx) {
    (void)dev;
    block *rec = ctx;
    if (!data || !rec) return;
    if (rec->bytes <= CACHE_MAX_BYTES) {
        while (tcache_n == CACHE_SLOTS ||
               (tcache_n > 0 && tcache_bytes + rec->bytes > CACHE_TOTAL_BYTES))
            tcache_drop_oldest();
        if (SG_UNLIKELY(!tcache_keyed)) {
            (void)pthread_once(&tcache_once, tcache_key_init);
            /* so tcache_at_exit runs */
            tcache_keyed = pthread_setspecific(tcache_key, tcache) == 0;
        }
        tcache[tcache_n++] = (cached){data, rec};
        tcache_bytes += rec->bytes;
        return;
    }
    release_block(data, rec);
}

/* ---- copies ----------------------------------------------------------------------------- */

static const char *kind_name(enum cudaMemcpyKind kind) {
    switch (kind) {
    case cudaMemcpyHostToDevice: return "from the host to";
    case cudaMemcpyDeviceToHost: return "to the host from";
    default: return "within";
    }
}

/* n bytes on the thread's current stream of `device`, then a wait for that stream: the copy is
 * ordered after work queued there and finished when this returns, as sg_device_impl asks. */
static sg_status copy_on(int device, void *dst, const void *src, size_t n,
                         enum cudaMemcpyKind kind) {
    sg_status st = check_index(device, "cuda copy");
    if (st || n == 0) return st;
    cudaStream_t stream = cur_stream[device];
    int          prev;
    cudaError_t  err = switch_to(device, &prev);
    if (err == cudaSuccess) {
        err = cudaMemcpyAsync(dst, src, n, kind, stream);
        if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
        restore(device, prev);
    }
    if (err != cudaSuccess)
        return fail(err, "cannot copy %zu bytes %s cuda:%d", n, kind_name(kind), device);
    return SG_OK;
}

static sg_status cuda_copy_from_host(sg_device dst_dev, void *dst, const void *src, size_t n) {
    return copy_on(dst_dev.index, dst, src, n, cudaMemcpyHostToDevice);
}

static sg_status cuda_copy_to_host(void *dst, sg_device src_dev, const void *src, size_t n) {
    return copy_on(src_dev.index, dst, src, n, cudaMemcpyDeviceToHost);
}

/* Between two devices: the source's pending work (on its device's current stream) is waited
 * for, then the copy runs on the destination's current stream, ordered after the work queued
 * there, and is waited for too. cudaMemcpyPeerAsync uses the direct link where the GPUs have
 * one and stages through the host otherwise. */
static sg_status cuda_copy_device(sg_device dst_dev, void *dst, sg_device src_dev,
                                  const void *src, size_t n) {
    if (dst_dev.index == src_dev.index)
        return copy_on(dst_dev.index, dst, src, n, cudaMemcpyDeviceToDevice);
    sg_status st = check_index(dst_dev.index, "cuda copy");
    if (!st) st = check_index(src_dev.index, "cuda copy");
    if (st || n == 0) return st;
    int         prev;
    cudaError_t err = switch_to(src_dev.index, &prev);
    if (err == cudaSuccess) {
        err = cudaStreamSynchronize(cur_stream[src_dev.index]);
        if (err == cudaSuccess) err = cudaSetDevice(dst_dev.index);
        if (err == cudaSuccess) {
            cudaStream_t stream = cur_stream[dst_dev.index];
            err = cudaMemcpyPeerAsync(dst, dst_dev.index, src, src_dev.index, n, stream);
            if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
        }
        (void)cudaSetDevice(prev);
    }
    if (err != cudaSuccess)
        return fail(err, "cannot copy %zu bytes from cuda:%d to cuda:%d", n, src_dev.index,
                    dst_dev.index);
    return SG_OK;
}

/* Queued on the thread's current stream and not waited for: like a kernel, it is ordered
 * before whatever the thread queues on that stream next (copies included). */
static sg_status cuda_memset_zero(sg_device dev, void *dst, size_t n) {
    sg_status st = check_index(dev.index, "cuda memset");
    if (st || n == 0) return st;
    int         prev;
    cudaError_t err = switch_to(dev.index, &prev);
    if (err == cudaSuccess) {
        err = cudaMemsetAsync(dst, 0, n, cur_stream[dev.index]);
        restore(dev.index, prev);
    }
    if (err != cudaSuccess) return fail(err, "cannot zero %zu bytes on cuda:%d", n, dev.index);
    return SG_OK;
}

/* ---- the device guard, streams and events (sg_backend.h's hooks) ------------------------ */

static sg_status cuda_get_device(int8_t *index) {
    int       d;
    sg_status st = current(&d, "cuda get_device");
    if (!st) *index = (int8_t)d;
    return st;
}

static sg_status cuda_set_device_hook(int8_t index) { return sg_cuda_set_device(index); }

static sg_status cuda_get_stream(sg_device dev, void **stream) {
    sg_status st = check_index(dev.index, "cuda get_stream");
    *stream = st ? NULL : (void *)cur_stream[dev.index];
    return st;
}

/* The stream is checked and set with dev current, then the thread's device is put back. */
static sg_status cuda_set_stream_hook(sg_device dev, void *stream) {
    sg_status st = check_index(dev.index, "cuda set_stream");
    if (st) return st;
    int         prev;
    cudaError_t err = switch_to(dev.index, &prev);
    if (err != cudaSuccess) return fail(err, "cuda set_stream: cannot make cuda:%d current", dev.index);
    st = sg_cuda_set_stream(stream);
    restore(dev.index, prev);
    return st;
}

static sg_status cuda_synchronize_hook(sg_device dev) {
    sg_status st = check_index(dev.index, "cuda synchronize");
    if (st) return st;
    cudaError_t err = cudaStreamSynchronize(cur_stream[dev.index]);
    if (err != cudaSuccess)
        return fail(err, "synchronize: the current stream of cuda:%d failed", dev.index);
    return SG_OK;
}

/* Runs call with dev current; fails naming what. */
#define ON_DEVICE(dev, what, call)                                                    \
    do {                                                                              \
        sg_status   st_ = check_index((dev).index, what);                             \
        int         prev_;                                                            \
        cudaError_t err_;                                                             \
        if (st_) return st_;                                                          \
        if ((err_ = switch_to((dev).index, &prev_)) == cudaSuccess) {                 \
            err_ = (call);                                                            \
            restore((dev).index, prev_);                                              \
        }                                                                             \
        if (err_ != cudaSuccess) return fail(err_, "%s on cuda:%d", what, (dev).index); \
        return SG_OK;                                                                 \
    } while (0)

static sg_status cuda_event_create(sg_device dev, void **event) {
    *event = NULL;
    ON_DEVICE(dev, "cuda event_create",
              cudaEventCreateWithFlags((cudaEvent_t *)event, cudaEventDisableTiming));
}

static void cuda_event_destroy(sg_device dev, void *event) {
    (void)dev;
    if (event && cudaEventDestroy((cudaEvent_t)event) != cudaSuccess) (void)cudaGetLastError();
}

static sg_status cuda_event_record(sg_device dev, void *event, void *stream) {
    ON_DEVICE(dev, "cuda event_record", cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream));
}

static sg_status cuda_event_wait(sg_device dev, void *event, void *stream) {
    ON_DEVICE(dev, "cuda event_wait",
              cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)event, 0));
}

static sg_status cuda_event_synchronize(sg_device dev, void *event) {
    (void)dev;
    cudaError_t err = cudaEventSynchronize((cudaEvent_t)event);
    return err == cudaSuccess ? SG_OK : fail(err, "cuda event_synchronize");
}

static sg_status cuda_event_query(sg_device dev, void *event, bool *done) {
    (void)dev;
    cudaError_t err = cudaEventQuery((cudaEvent_t)event);
    *done = err == cudaSuccess;
    if (err == cudaSuccess || err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        return SG_OK;
    }
    return fail(err, "cuda event_query");
}

static const sg_device_impl cuda_impl = {
    .size = sizeof(sg_device_impl),
    .name = "cuda",
    .count = cuda_count,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy_from_host = cuda_copy_from_host,
    .copy_to_host = cuda_copy_to_host,
    .copy_device = cuda_copy_device,
    .memset_zero = cuda_memset_zero,
    .get_device = cuda_get_device,
    .set_device = cuda_set_device_hook,
    .get_stream = cuda_get_stream,
    .set_stream = cuda_set_stream_hook,
    .synchronize = cuda_synchronize_hook,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_wait = cuda_event_wait,
    .event_synchronize = cuda_event_synchronize,
    .event_query = cuda_event_query,
};

const sg_device_impl *sg__cuda_impl(void) { return &cuda_impl; }

/* ---- sg_cuda.h -------------------------------------------------------------------------- */

bool sg_cuda_available(const char **why) { return cuda_count(why) > 0; }

int sg_cuda_device_count(void) { return cuda_count(NULL); }

sg_status sg_cuda_set_device(int index) {
    sg_status st = check_index(index, "sg_cuda_set_device");
    if (st) return st;
    cudaError_t err = cudaSetDevice(index);
    if (err != cudaSuccess)
        return fail(err, "sg_cuda_set_device: cannot make cuda:%d current", index);
    return SG_OK;
}

int sg_cuda_current_device(void) {
    int d;
    if (cuda_count(NULL) == 0) return -1;
    if (cudaGetDevice(&d) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return d;
}

sg_status sg_cuda_set_stream(void *stream) {
    int       d;
    sg_status st = current(&d, "sg_cuda_set_stream");
    if (st) return st;
#if CUDART_VERSION >= 12080 /* cudaStreamGetDevice is new in CUDA 12.8 */
    if (stream) {
        int         owner;
        cudaError_t err = cudaStreamGetDevice((cudaStream_t)stream, &owner);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            return sg_error(SG_EINVAL, "sg_cuda_set_stream: not a usable stream: %s",
                            cudaGetErrorString(err));
        }
        if (owner != d)
            return sg_error(SG_EINVAL,
                            "sg_cuda_set_stream: the stream belongs to cuda:%d, but the "
                            "thread's current device is cuda:%d",
                            owner, d);
    }
#endif
    /* the cached blocks of the stream left behind go back to the pool while it surely lives */
    if (cur_stream[d] != (cudaStream_t)stream) tcache_flush();
    cur_stream[d] = (cudaStream_t)stream;
    return SG_OK;
}

void *sg_cuda_current_stream(void) {
    int d = sg_cuda_current_device();
    return d >= 0 && d < MAX_DEVICES ? (void *)cur_stream[d] : NULL;
}

sg_status sg_cuda_synchronize(void) {
    int       d;
    sg_status st = current(&d, "sg_cuda_synchronize");
    if (st) return st;
    cudaError_t err = cudaStreamSynchronize(cur_stream[d]);
    if (err != cudaSuccess)
        return fail(err, "sg_cuda_synchronize: the current stream of cuda:%d failed", d);
    return SG_OK;
}

#else /* !SG_HAVE_CUDA: the backend exists and reports itself unavailable */

void sg__cuda_cache_flush(void) {}
void *sg__cuda_storage_stream(const sg_storage *s) {
    (void)s;
    return NULL;
}

static int nocuda_count(const char **why) {
    if (why) *why = NO_CUDA;
    return 0;
}

/* Unreachable through the runtime (sg_device_check fails first): kept for callers of the impl. */
static sg_status nocuda(void) { return sg_error(SG_EDEVICE, "cuda: " NO_CUDA); }

static sg_status nocuda_alloc(sg_device dev, size_t nbytes, void **data, void **ctx) {
    (void)dev, (void)nbytes;
    *data = NULL;
    *ctx = NULL;
    return nocuda();
}
static void nocuda_free(sg_device dev, void *data, void *ctx) { (void)dev, (void)data, (void)ctx; }
static sg_status nocuda_copy_from_host(sg_device d, void *dst, const void *src, size_t n) {
    (void)d, (void)dst, (void)src, (void)n;
    return nocuda();
}
static sg_status nocuda_copy_to_host(void *dst, sg_device d, const void *src, size_t n) {
    (void)d, (void)dst, (void)src, (void)n;
    return nocuda();
}

/* Rationale: an impl rather than NULL, so that sg_device_count and sg_device_check say
 * "this build has no CUDA support" instead of "no implementation is registered". */
static const sg_device_impl nocuda_impl = {
    .size = sizeof(sg_device_impl),
    .name = "cuda",
    .count = nocuda_count,
    .alloc = nocuda_alloc,
    .free = nocuda_free,
    .copy_from_host = nocuda_copy_from_host,
    .copy_to_host = nocuda_copy_to_host,
};

const sg_device_impl *sg__cuda_impl(void) { return &nocuda_impl; }

bool sg_cuda_available(const char **why) { return nocuda_count(why) > 0; }
int  sg_cuda_device_count(void) { return 0; }
int  sg_cuda_current_device(void) { return -1; }
void *sg_cuda_current_stream(void) { return NULL; }

sg_status sg_cuda_set_device(int index) {
    (void)index;
    return sg_error(SG_EDEVICE, "sg_cuda_set_device: " NO_CUDA);
}
sg_status sg_cuda_set_stream(void *stream) {
    (void)stream;
    return sg_error(SG_EDEVICE, "sg_cuda_set_stream: " NO_CUDA);
}
sg_status sg_cuda_synchronize(void) {
    return sg_error(SG_EDEVICE, "sg_cuda_synchronize: " NO_CUDA);
}

#endif
