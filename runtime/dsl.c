/* dsl.c: kernels a DSL compiled ahead of time (sg_dsl.h; docs/dsl.md "At run time").
 *
 * Registration, switches and listing need no CUDA. Loading and launching use the CUDA driver
 * API, whose entry points come from the CUDA runtime (cudaGetDriverEntryPointByVersion): the
 * runtime library links the static CUDA runtime, which loads the driver only when first used,
 * so nothing here needs libcuda at link or load time.
 *
 * An artifact's state per device is one byte in its slot (0 not loaded, 1 loaded, 2 failed),
 * read with acquire on the call path; the load itself runs under the device's mutex, so threads
 * that make the first call at once wait for one load instead of loading twice. An object
 * artifact (a DSL's own loader and entry, no image) needs no driver call: its loader runs once
 * per process under one lock of its own and its entry is called where a launch would be.
 */
#include "sg_dsl.h"

#include "sg_backend.h"
#include "sg_cuda.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_CUDA "this build has no CUDA support"

/* An object artifact: the DSL's own loader and entry instead of an image (sg_dsl_register
 * refuses one with a single hook; launching one checks again). */
static bool is_object(const sg_dsl_artifact *a) { return a->load || a->run; }

enum { NOT_LOADED = 0, LOADED = 1, FAILED = 2 };

/* ---- registration and switches (no CUDA) ------------------------------------------------- */

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
/* Under reg_lock: the registered artifacts (chained through their slots), and the names
 * switched off. */
static const sg_dsl_artifact *reg_head, *reg_tail;
static size_t                 reg_count;
static char                 **off_names;
static size_t                 off_n, off_cap;
static bool                   env_read;

static bool name_ok(const char *s) {
    if (!s || !*s) return false;
    for (; *s; s++)
        if (*s == ',' || *s == ' ' || *s == '\t' || *s == '\n') return false;
    return true;
}

/* Whether switch name `n` covers the artifact: its DSL, its op whole, or its op's base name
 * (the op without its overload). */
static bool covers(const char *n, const sg_dsl_artifact *a) {
    if (!strstr(n, "::")) return strcmp(n, a->dsl) == 0;
    size_t len = strlen(n);
    return strncmp(n, a->op, len) == 0 && (a->op[len] == '\0' || a->op[len] == '.');
}

static bool switched_off(const sg_dsl_artifact *a) {
    for (size_t i = 0; i < off_n; i++)
        if (covers(off_names[i], a)) return true;
    return false;
}

static void refresh_all(void) {
    for (const sg_dsl_artifact *a = reg_head; a; a = a->slot->next)
        __atomic_store_n(&a->slot->off, (uint8_t)switched_off(a), __ATOMIC_RELAXED);
}

static sg_status switch_off_locked(const char *name, size_t len) {
    for (size_t i = 0; i < off_n; i++)
        if (strlen(off_names[i]) == len && strncmp(off_names[i], name, len) == 0) return SG_OK;
    if (off_n == off_cap) {
        size_t cap = off_cap ? 2 * off_cap : 8;
        char **p = realloc(off_names, cap * sizeof *p);
        if (!p) return SG_ENOMEM;
        off_names = p;
        off_cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) return SG_ENOMEM;
    memcpy(copy, name, len);
    copy[len] = '\0';
    off_names[off_n++] = copy;
    return SG_OK;
}

/* SG_DSL_DISABLE and SG_DSL_DISABLE_OPS: comma-separated names, spaces around them ignored.
 * Rationale: out of memory here cannot be reported to anyone (the first call may be a
 * registration from a library's init); the names not kept stay on. */
static void read_env_locked(void) {
    if (env_read) return;
    env_read = true;
    const char *vars[2] = {"SG_DSL_DISABLE", "SG_DSL_DISABLE_OPS"};
    for (int v = 0; v < 2; v++) {
        const char *s = getenv(vars[v]);
        while (s && *s) {
            while (*s == ' ' || *s == ',') s++;
            const char *e = s;
            while (*e && *e != ',') e++;
            size_t len = (size_t)(e - s);
            while (len > 0 && s[len - 1] == ' ') len--;
            if (len > 0) (void)switch_off_locked(s, len);
            s = e;
        }
    }
}

sg_status sg_dsl_register(const sg_dsl_artifact *a) {
    if (!a) return sg_error(SG_EINVAL, "sg_dsl_register: the artifact is NULL");
    const char *pfx = a->prefix && *a->prefix ? a->prefix : "(no prefix)";
    const char *missing = !a->prefix || !*a->prefix   ? "prefix"
                          : !a->op || !*a->op         ? "op"
                          : !a->dsl || !*a->dsl       ? "DSL name"
                          : !a->symbol || !*a->symbol ? "symbol"
                          : !a->slot                  ? "slot"
                                                      : NULL;
    if (missing)
        return sg_error(SG_EINVAL, "sg_dsl_register: %s: the artifact has no %s", pfx, missing);
    /* the kind: an image (with its size) and no hooks, or both hooks and no image */
    bool image = a->image || a->image_size;
    if (a->load || a->run) {
        if (!a->load || !a->run)
            return sg_error(SG_EINVAL,
                            "sg_dsl_register: %s: the artifact has a %s hook but no %s hook (an "
                            "object artifact needs both)",
                            pfx, a->load ? "load" : "run", a->load ? "run" : "load");
        if (image)
            return sg_error(SG_EINVAL,
                            "sg_dsl_register: %s: the artifact has both an image and load/run "
                            "hooks (an object artifact has no image)",
                            pfx);
    } else if (!a->image || !a->image_size) {
        return sg_error(SG_EINVAL,
                        "sg_dsl_register: %s: the artifact has no image (and no load/run hooks)",
                        pfx);
    }
    if (!is_object(a) && (a->block_x < 1 || a->block_x > 1024))
        return sg_error(SG_EINVAL, "sg_dsl_register: %s: block_x is %u, not in 1..1024", pfx,
                        a->block_x);
    if (a->cc_major < 1 || a->cc_minor < 0 || a->cc_minor > 9)
        return sg_error(SG_EINVAL, "sg_dsl_register: %s: capability %d.%d is not a CUDA one", pfx,
                        (int)a->cc_major, (int)a->cc_minor);
    pthread_mutex_lock(&reg_lock);
    read_env_locked();
    sg_status st = SG_OK;
    for (const sg_dsl_artifact *b = reg_head; b; b = b->slot->next) {
        if (b == a) goto out; /* registered already */
        if (strcmp(b->prefix, a->prefix) == 0) {
            st = sg_error(SG_EEXISTS, "sg_dsl_register: %s: another artifact has this prefix", pfx);
            goto out;
        }
        if (b->slot == a->slot) {
            st = sg_error(SG_EEXISTS, "sg_dsl_register: %s: its slot belongs to %s", pfx,
                          b->prefix);
            goto out;
        }
    }
    a->slot->next = NULL;
    __atomic_store_n(&a->slot->off, (uint8_t)switched_off(a), __ATOMIC_RELAXED);
    if (reg_tail)
        reg_tail->slot->next = a;
    else
        reg_head = a;
    reg_tail = a;
    reg_count++;
out:
    pthread_mutex_unlock(&reg_lock);
    return st;
}

sg_status sg_dsl_set_enabled(const char *dsl_or_op, bool on) {
    if (!name_ok(dsl_or_op))
        return sg_error(SG_EINVAL,
                        "sg_dsl_set_enabled: '%s' is not a DSL or op name (empty, or with a "
                        "comma or space)",
                        dsl_or_op ? dsl_or_op : "(null)");
    pthread_mutex_lock(&reg_lock);
    read_env_locked();
    sg_status st = SG_OK;
    if (on) {
        for (size_t i = 0; i < off_n; i++)
            if (strcmp(off_names[i], dsl_or_op) == 0) {
                free(off_names[i]);
                off_names[i] = off_names[--off_n];
                break;
            }
    } else {
        st = switch_off_locked(dsl_or_op, strlen(dsl_or_op));
    }
    if (!st) refresh_all();
    pthread_mutex_unlock(&reg_lock);
    if (st) return sg_error(st, "sg_dsl_set_enabled: %s: out of memory", dsl_or_op);
    return SG_OK;
}

bool sg_dsl_enabled(const sg_dsl_artifact *a) {
    return a && a->slot && !__atomic_load_n(&a->slot->off, __ATOMIC_RELAXED);
}

size_t sg_dsl_list(const sg_dsl_artifact **out, size_t cap) {
    pthread_mutex_lock(&reg_lock);
    size_t i = 0;
    for (const sg_dsl_artifact *a = reg_head; a && i < cap && out; a = a->slot->next) out[i++] = a;
    size_t n = reg_count;
    pthread_mutex_unlock(&reg_lock);
    return n;
}

const char *sg_dsl_failure(const sg_dsl_artifact *a) {
    const char *f = a && a->slot ? __atomic_load_n(&a->slot->failure, __ATOMIC_ACQUIRE) : NULL;
    return f ? f : "";
}

static uint8_t state_of(const sg_dsl_artifact *a, int device) {
    if (!a || !a->slot || device < 0 || device >= SG_DSL_MAX_DEVICES) return NOT_LOADED;
    return __atomic_load_n(&a->slot->state[device], __ATOMIC_ACQUIRE);
}

bool sg_dsl_loaded(const sg_dsl_artifact *a, int device) { return state_of(a, device) == LOADED; }
bool sg_dsl_failed(const sg_dsl_artifact *a, int device) { return state_of(a, device) == FAILED; }

uint64_t sg_dsl_launch_count(const sg_dsl_artifact *a) {
    return a && a->slot ? __atomic_load_n(&a->slot->launches, __ATOMIC_RELAXED) : 0;
}
uint32_t sg_dsl_load_count(const sg_dsl_artifact *a) {
    return a && a->slot ? __atomic_load_n(&a->slot->loads, __ATOMIC_RELAXED) : 0;
}

/* Checks what every launch is given; SG_OK where it is well-formed. */
static sg_status check_launch(const sg_dsl_artifact *a, int device, const uint32_t grid[3],
                              void **args) {
    if (!a || !a->slot || !a->prefix || (is_object(a) && (!a->load || !a->run)))
        return sg_error(SG_EINVAL, "sg_dsl_launch: the artifact is NULL or not complete");
    if (!grid) return sg_error(SG_EINVAL, "sg_dsl_launch: %s: the grid is NULL", a->prefix);
    if (!args && a->nparams)
        return sg_error(SG_EINVAL, "sg_dsl_launch: %s: args is NULL for %u parameters",
                        a->prefix, a->nparams);
    if (device < 0 || device >= SG_DSL_MAX_DEVICES)
        return sg_error(SG_EINVAL, "sg_dsl_launch: %s: device %d is out of range", a->prefix,
                        device);
    return SG_OK;
}

#ifdef SG_HAVE_CUDA

#include <cuda.h>
#include <cuda_runtime_api.h>

/* ---- the driver's entry points ----------------------------------------------------------- */

typedef CUresult (*pfn_load)(CUmodule *, const void *);
typedef CUresult (*pfn_unload)(CUmodule);
typedef CUresult (*pfn_get_function)(CUfunction *, CUmodule, const char *);
typedef CUresult (*pfn_func_get)(int *, CUfunction_attribute, CUfunction);
typedef CUresult (*pfn_func_set)(CUfunction, CUfunction_attribute, int);
typedef CUresult (*pfn_launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*pfn_error_text)(CUresult, const char **);
typedef CUresult (*pfn_ctx_current)(CUcontext *);

static struct {
    pfn_load         load;
    pfn_unload       unload;
    pfn_get_function get_function;
    pfn_func_get     func_get;
    pfn_func_set     func_set;
    pfn_launch       launch;
    pfn_error_text   error_name, error_string;
    pfn_ctx_current  ctx_current;
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;
static char           drv_why[256]; /* empty where every entry point was found */

/* Rationale: the ABI version asked for: these calls have kept their signatures since CUDA 12.0,
 * the oldest driver the toolkits this builds with support. */
enum { DRIVER_API = 12000 };

static bool entry(const char *name, void **fn) {
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    cudaError_t err = cudaGetDriverEntryPointByVersion(name, fn, DRIVER_API, cudaEnableDefault, &q);
#else
    cudaError_t err = cudaGetDriverEntryPoint(name, fn, cudaEnableDefault, &q);
#endif
    if (err != cudaSuccess || q != cudaDriverEntryPointSuccess || !*fn) {
        (void)cudaGetLastError();
        if (!drv_why[0])
            snprintf(drv_why, sizeof drv_why, "the CUDA driver has no %s (%s)", name,
                     err != cudaSuccess ? cudaGetErrorString(err) : "entry point not found");
        *fn = NULL;
        return false;
    }
    return true;
}

static void find_driver(void) {
    const char *why = NULL;
    if (!sg_cuda_available(&why)) {
        snprintf(drv_why, sizeof drv_why, "%s", why && *why ? why : "CUDA is unavailable");
        return;
    }
    static const char *const names[9] = {"cuModuleLoadData",   "cuModuleUnload",
                                         "cuModuleGetFunction", "cuFuncGetAttribute",
                                         "cuFuncSetAttribute",  "cuLaunchKernel",
                                         "cuGetErrorName",      "cuGetErrorString",
                                         "cuCtxGetCurrent"};
    void *p[9] = {0};
    bool  ok = true;
    for (int i = 0; i < 9 && ok; i++) ok = entry(names[i], &p[i]);
    if (!ok) return;
    /* Rationale: object pointers converted to function pointers through memcpy, which ISO C
     * allows where a cast is only a common extension. */
    memcpy(&drv.load, &p[0], sizeof p[0]);
    memcpy(&drv.unload, &p[1], sizeof p[1]);
    memcpy(&drv.get_function, &p[2], sizeof p[2]);
    memcpy(&drv.func_get, &p[3], sizeof p[3]);
    memcpy(&drv.func_set, &p[4], sizeof p[4]);
    memcpy(&drv.launch, &p[5], sizeof p[5]);
    memcpy(&drv.error_name, &p[6], sizeof p[6]);
    memcpy(&drv.error_string, &p[7], sizeof p[7]);
    memcpy(&drv.ctx_current, &p[8], sizeof p[8]);
}

/* Where the driver cannot be used, why; else NULL. */
static const char *driver_missing(void) {
    pthread_once(&drv_once, find_driver);
    return drv.launch ? NULL : drv_why;
}

/* Where CUDA cannot be used, why; else NULL. An object artifact needs CUDA but not the
 * driver's entry points. */
static const char *cuda_missing(void) {
    const char *why = NULL;
    if (sg_cuda_available(&why)) return NULL;
    return why && *why ? why : "CUDA is unavailable";
}

static void cu_text(CUresult r, char *buf, size_t n) {
    const char *name = NULL, *text = NULL;
    if (drv.error_name(r, &name) != CUDA_SUCCESS) name = NULL;
    if (drv.error_string(r, &text) != CUDA_SUCCESS) text = NULL;
    snprintf(buf, n, "%s: %s", name ? name : "CUDA error", text ? text : "(no description)");
}

/* ---- capabilities and per-device locks --------------------------------------------------- */

static int32_t caps[SG_DSL_MAX_DEVICES]; /* 0 not asked yet, -1 none, else 10*major+minor */

int32_t sg_dsl_capability(int device) {
    if (device < 0 || device >= SG_DSL_MAX_DEVICES) return 0;
    int32_t c = __atomic_load_n(&caps[device], __ATOMIC_RELAXED);
    if (SG_LIKELY(c > 0)) return c;
    if (c < 0) return 0;
    int major = 0, minor = 0;
    c = -1;
    if (device < sg_cuda_device_count()) {
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) ==
                cudaSuccess &&
            cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) ==
                cudaSuccess)
            c = 10 * major + minor;
        else
            (void)cudaGetLastError();
    }
    __atomic_store_n(&caps[device], c, __ATOMIC_RELAXED);
    return c > 0 ? c : 0;
}

static pthread_mutex_t dev_lock[SG_DSL_MAX_DEVICES];
static pthread_once_t  dev_lock_once = PTHREAD_ONCE_INIT;

static void init_dev_locks(void) {
    for (int i = 0; i < SG_DSL_MAX_DEVICES; i++) pthread_mutex_init(&dev_lock[i], NULL);
}

/* Whether `stream` (with stream_given; else the thread's current stream of device, which is
 * current) is capturing a graph; an answer CUDA refuses counts as capturing, so nothing loads
 * then. */
static bool capturing(int device, bool stream_given, void *stream) {
    if (!stream_given && sg_stream_current(SG_CUDA(device), &stream)) return true;
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing((cudaStream_t)stream, &cs) != cudaSuccess) {
        (void)cudaGetLastError();
        return true;
    }
    return cs != cudaStreamCaptureStatusNone;
}

/* ---- loading ----------------------------------------------------------------------------- */

/* Marks the artifact failed on device and keeps the message where it is the first. */
static void mark_failed(const sg_dsl_artifact *a, int device, const char *fmt, ...)
    SG_PRINTF(3, 4);
static void mark_failed(const sg_dsl_artifact *a, int device, const char *fmt, ...) {
    char    what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t len = strlen(a->prefix) + strlen(what) + 32;
    char  *msg = malloc(len);
    if (msg) {
        snprintf(msg, len, "%s on cuda:%d: %s", a->prefix, device, what);
        char *none = NULL;
        if (!__atomic_compare_exchange_n(&a->slot->failure, &none, msg, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
            free(msg);
    }
    __atomic_store_n(&a->slot->state[device], FAILED, __ATOMIC_RELEASE);
}

/* CUDA's rule: a block may use 48 KiB of shared memory (static and dynamic together) without
 * asking; above that the function must opt in to the dynamic amount, up to the device's
 * opt-in limit. 48 KiB exactly needs no opt-in. */
enum { SHARED_DEFAULT = 48 * 1024 };

/* The body of a load on device (current, lock held); false where it failed (marked). */
static bool load_on(const sg_dsl_artifact *a, int device) {
    char     cu[300];
    CUresult r;
    void    *copy = NULL;
    const void *image = a->image;
    /* Rationale: the driver reads the ELF image in place, and a byte array carries no
     * alignment; an unaligned one is copied. */
    if ((uintptr_t)image % 16) {
        copy = malloc(a->image_size);
        if (!copy) {
            mark_failed(a, device, "out of host memory copying the image");
            return false;
        }
        memcpy(copy, image, a->image_size);
        image = copy;
    }
    CUmodule mod = NULL;
    r = drv.load(&mod, image);
    free(copy);
    if (r != CUDA_SUCCESS) {
        cu_text(r, cu, sizeof cu);
        mark_failed(a, device, "cannot load the image (built for sm_%d%d): %s", (int)a->cc_major,
                    (int)a->cc_minor, cu);
        return false;
    }
    CUfunction f = NULL;
    r = drv.get_function(&f, mod, a->symbol);
    if (r != CUDA_SUCCESS) {
        cu_text(r, cu, sizeof cu);
        mark_failed(a, device, "the image has no kernel '%s': %s", a->symbol, cu);
        (void)drv.unload(mod);
        return false;
    }
    int max_threads = 0, static_shared = 0;
    if ((r = drv.func_get(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f)) ||
        (r = drv.func_get(&static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f))) {
        cu_text(r, cu, sizeof cu);
        mark_failed(a, device, "cannot read the attributes of '%s': %s", a->symbol, cu);
        (void)drv.unload(mod);
        return false;
    }
    if ((uint32_t)max_threads < a->block_x) {
        mark_failed(a, device, "'%s' runs at most %d threads per block, the artifact asks %u",
                    a->symbol, max_threads, a->block_x);
        (void)drv.unload(mod);
        return false;
    }
    uint64_t need = (uint64_t)a->shared + (uint64_t)static_shared;
    if (need > SHARED_DEFAULT) {
        int optin = 0;
        if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
            cudaSuccess) {
            (void)cudaGetLastError();
            optin = 0;
        }
        if (need > (uint64_t)optin) {
            mark_failed(a, device,
                        "'%s' needs %llu bytes of shared memory per block; the device allows %d",
                        a->symbol, (unsigned long long)need, optin);
            (void)drv.unload(mod);
            return false;
        }
        r = drv.func_set(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)a->shared);
        if (r != CUDA_SUCCESS) {
            cu_text(r, cu, sizeof cu);
            mark_failed(a, device, "cannot allow %u bytes of dynamic shared memory: %s",
                        a->shared, cu);
            (void)drv.unload(mod);
            return false;
        }
    }
    /* the module stays loaded for the process: its function is the handle launches use, in
     * the context current now (make_current's) */
    CUcontext ctx = NULL;
    if (drv.ctx_current(&ctx) != CUDA_SUCCESS) ctx = NULL;
    a->slot->ctx[device] = (void *)ctx;
    a->slot->func[device] = (void *)f;
    __atomic_fetch_add(&a->slot->loads, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&a->slot->state[device], LOADED, __ATOMIC_RELEASE);
    return true;
}

/* Makes device current for a load, the current one kept in *prev; false (the artifact marked
 * failed on device) where CUDA refuses. */
static bool make_current(const sg_dsl_artifact *a, int device, int *prev) {
    cudaError_t err = cudaGetDevice(prev);
    if (err == cudaSuccess && *prev != device) err = cudaSetDevice(device);
    if (err == cudaSuccess) return true;
    (void)cudaGetLastError();
    mark_failed(a, device, "cannot make the device current: %s", cudaGetErrorString(err));
    return false;
}

/* Outcomes of a load attempt. */
enum { LOAD_OK, LOAD_FAILED, LOAD_DECLINED };

static bool built_for(const sg_dsl_artifact *a, int device) {
    return sg_dsl_capability(device) == 10 * a->cc_major + a->cc_minor;
}

/* ---- object artifacts: the DSL's loader ---------------------------------------------------
 *
 * The loader loads into every device at once, so it runs once per process, under obj_lock, and
 * its outcome (slot->loader) is then given to every device built for the artifact. Rationale:
 * one lock for all object artifacts: each loader runs once, so serialising them costs nothing
 * that matters, and a mutex cannot live in a slot that SG_DSL_SLOT_INIT zero-fills.
 *
 * Lock order: reg_lock (sg_dsl_preload), then obj_lock or one dev_lock; obj_lock and the device
 * locks are never held together (an object artifact's state changes only under obj_lock, an
 * image artifact's only under its device's lock). */
static pthread_mutex_t obj_lock = PTHREAD_MUTEX_INITIALIZER;

/* Gives device the loader's outcome (obj_lock held). */
static void obj_mark(const sg_dsl_artifact *a, int device) {
    sg_dsl_slot *s = a->slot;
    if (__atomic_load_n(&s->state[device], __ATOMIC_RELAXED) != NOT_LOADED) return;
    if (s->loader == LOADED) {
        __atomic_store_n(&s->state[device], LOADED, __ATOMIC_RELEASE);
        return;
    }
    cudaError_t e = (cudaError_t)s->loader_error;
    mark_failed(a, device, "the DSL's loader failed: %s: %s", cudaGetErrorName(e),
                cudaGetErrorString(e));
}

/* Loads an object artifact, as load() below (the device's capability matches). */
static int load_object(const sg_dsl_artifact *a, int device, bool stream_given, void *stream) {
    sg_dsl_slot *s = a->slot;
    pthread_mutex_lock(&obj_lock);
    int     out = LOAD_FAILED;
    uint8_t st = __atomic_load_n(&s->state[device], __ATOMIC_ACQUIRE);
    if (st != NOT_LOADED) {
        out = st == LOADED ? LOAD_OK : LOAD_FAILED;
        goto done;
    }
    if (s->loader == NOT_LOADED) {
        int prev = -1;
        if (!make_current(a, device, &prev)) goto done;
        if (capturing(device, stream_given, stream)) {
            out = LOAD_DECLINED;
        } else {
            int e = a->load ? a->load() : (int)cudaErrorInvalidValue;
            s->loader_error = e;
            s->loader = e ? FAILED : LOADED;
            if (e)
                (void)cudaGetLastError(); /* what the loader left is reported here */
            else
                __atomic_fetch_add(&s->loads, 1, __ATOMIC_RELAXED);
        }
        /* always: the loader may have made another device current */
        if (cudaSetDevice(prev) != cudaSuccess) (void)cudaGetLastError();
        if (out == LOAD_DECLINED) goto done;
    }
    /* the asking device first, so that the message kept names it */
    obj_mark(a, device);
    int n = sg_cuda_device_count();
    for (int d = 0; d < n && d < SG_DSL_MAX_DEVICES; d++)
        if (d != device && built_for(a, d)) obj_mark(a, d);
    out = s->loader == LOADED ? LOAD_OK : LOAD_FAILED;
done:
    pthread_mutex_unlock(&obj_lock);
    return out;
}

/* ---- loading, both kinds ------------------------------------------------------------------ */

/* Loads the artifact on device once (the device's capability matches: checked by callers).
 * LOAD_DECLINED where the stream is capturing (the launch's stream where stream_given, else the
 * thread's current one): nothing is marked, a later call may load. */
static int load(const sg_dsl_artifact *a, int device, bool stream_given, void *stream) {
    if (is_object(a)) return load_object(a, device, stream_given, stream);
    pthread_once(&dev_lock_once, init_dev_locks);
    pthread_mutex_lock(&dev_lock[device]);
    int     out = LOAD_FAILED;
    uint8_t st = __atomic_load_n(&a->slot->state[device], __ATOMIC_ACQUIRE);
    if (st != NOT_LOADED) {
        out = st == LOADED ? LOAD_OK : LOAD_FAILED;
        goto done;
    }
    const char *why = driver_missing();
    if (why) {
        mark_failed(a, device, "%s", why);
        goto done;
    }
    int prev = -1;
    if (!make_current(a, device, &prev)) goto done;
    if (capturing(device, stream_given, stream))
        out = LOAD_DECLINED;
    else
        out = load_on(a, device) ? LOAD_OK : LOAD_FAILED;
    if (prev != device && cudaSetDevice(prev) != cudaSuccess) (void)cudaGetLastError();
done:
    pthread_mutex_unlock(&dev_lock[device]);
    return out;
}

static SG_NOINLINE bool ready_slow(const sg_dsl_artifact *a, int device) {
    return built_for(a, device) && load(a, device, false, NULL) == LOAD_OK;
}

bool sg_dsl_ready(const sg_dsl_artifact *a, int device) {
    if (SG_UNLIKELY(!a || !a->slot || device < 0 || device >= SG_DSL_MAX_DEVICES)) return false;
    const sg_dsl_slot *s = a->slot;
    if (__atomic_load_n(&s->off, __ATOMIC_RELAXED)) return false;
    uint8_t st = __atomic_load_n(&s->state[device], __ATOMIC_ACQUIRE);
    if (SG_LIKELY(st == LOADED)) return true;
    return st == NOT_LOADED && ready_slow(a, device);
}

/* Launches an image artifact loaded on device, in the current context (its load's). */
static sg_status launch_image(const sg_dsl_artifact *a, int device, const uint32_t grid[3],
                              void **args, void *stream) {
    sg_dsl_slot *s = a->slot;
    CUresult     r = drv.launch((CUfunction)s->func[device], grid[0], grid[1], grid[2], a->block_x,
                                1, 1, a->shared, (CUstream)stream, args, NULL);
    if (r != CUDA_SUCCESS) {
        char cu[300];
        cu_text(r, cu, sizeof cu);
        return sg_error(SG_EDEVICE, "sg_dsl_launch: %s on cuda:%d, grid [%u, %u, %u]: %s",
                        a->prefix, device, grid[0], grid[1], grid[2], cu);
    }
    __atomic_fetch_add(&s->launches, 1, __ATOMIC_RELAXED);
    return SG_OK;
}

sg_status sg_dsl_launch(const sg_dsl_artifact *a, int device, const uint32_t grid[3], void **args,
                        void *stream) {
    sg_status st = check_launch(a, device, grid, args);
    if (st) return st;
    if (!grid[0] || !grid[1] || !grid[2]) return SG_OK;
    bool object = is_object(a);
    if (!object && (grid[0] > 0x7fffffffu || grid[1] > 65535 || grid[2] > 65535))
        return sg_error(SG_EINVAL,
                        "sg_dsl_launch: %s: grid [%u, %u, %u] is beyond CUDA's limits "
                        "([2^31-1, 65535, 65535])",
                        a->prefix, grid[0], grid[1], grid[2]);
    sg_dsl_slot *s = a->slot;
    if (SG_UNLIKELY(__atomic_load_n(&s->state[device], __ATOMIC_ACQUIRE) != LOADED)) {
        const char *why = object ? cuda_missing() : driver_missing();
        if (why)
            return sg_error(SG_EDEVICE, "sg_dsl_launch: %s on cuda:%d: %s", a->prefix, device,
                            why);
        if (!built_for(a, device))
            return sg_error(SG_EDEVICE,
                            "sg_dsl_launch: %s was built for sm_%d%d; cuda:%d is %s", a->prefix,
                            (int)a->cc_major, (int)a->cc_minor, device,
                            sg_dsl_capability(device) ? "another architecture" : "not a device");
        int r = load(a, device, true, stream);
        if (r == LOAD_DECLINED)
            return sg_error(SG_ESTATE,
                            "sg_dsl_launch: %s is not loaded on cuda:%d and the stream is "
                            "capturing a graph (sg_dsl_preload before capturing)",
                            a->prefix, device);
        if (r == LOAD_FAILED)
            return sg_error(SG_EDEVICE, "sg_dsl_launch: %s", sg_dsl_failure(a));
    }
    /* Rationale: an image's function needs the context it was loaded in to be current, and
     * where it is, asking the driver costs far less than the runtime's cudaGetDevice; any
     * other context goes the way below, which makes the device current and puts it back. */
    CUcontext cur = NULL;
    if (!object && drv.ctx_current(&cur) == CUDA_SUCCESS && cur && cur == s->ctx[device])
        return launch_image(a, device, grid, args, stream);
    int         prev = device;
    cudaError_t err = cudaGetDevice(&prev);
    if (err == cudaSuccess && prev != device) err = cudaSetDevice(device);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return sg_error(SG_EDEVICE, "sg_dsl_launch: %s: cannot make cuda:%d current: %s",
                        a->prefix, device, cudaGetErrorString(err));
    }
    if (object) {
        int e = a->run(args, stream);
        if (prev != device && cudaSetDevice(prev) != cudaSuccess) (void)cudaGetLastError();
        if (e) {
            (void)cudaGetLastError(); /* what the entry left is reported here */
            return sg_error(SG_EDEVICE, "sg_dsl_launch: %s on cuda:%d: %s: %s", a->prefix, device,
                            cudaGetErrorName((cudaError_t)e), cudaGetErrorString((cudaError_t)e));
        }
        __atomic_fetch_add(&s->launches, 1, __ATOMIC_RELAXED);
        return SG_OK;
    }
    st = launch_image(a, device, grid, args, stream);
    if (prev != device && cudaSetDevice(prev) != cudaSuccess) (void)cudaGetLastError();
    return st;
}

sg_status sg_dsl_preload(int device) {
    const char *why = driver_missing();
    if (why) return sg_error(SG_EDEVICE, "sg_dsl_preload: cuda:%d: %s", device, why);
    int n = sg_cuda_device_count();
    if (device < 0 || device >= n)
        return sg_error(SG_EDEVICE, "sg_dsl_preload: device cuda:%d does not exist (%d CUDA "
                        "device%s found)", device, n, n == 1 ? "" : "s");
    size_t                 failed = 0, declined = 0;
    const sg_dsl_artifact *first = NULL;
    pthread_mutex_lock(&reg_lock);
    for (const sg_dsl_artifact *a = reg_head; a; a = a->slot->next) {
        if (a->slot->off || !built_for(a, device)) continue;
        int r = load(a, device, false, NULL);
        if (r == LOAD_DECLINED) declined++;
        if (r == LOAD_FAILED && !failed++) first = a;
    }
    pthread_mutex_unlock(&reg_lock);
    if (declined)
        return sg_error(SG_ESTATE, "sg_dsl_preload: cuda:%d: the current stream is capturing a "
                        "graph; nothing can be loaded now", device);
    if (failed)
        return sg_error(SG_EDEVICE, "sg_dsl_preload: cuda:%d: %zu artifact%s failed to load; "
                        "the first: %s", device, failed, failed == 1 ? "" : "s",
                        sg_dsl_failure(first));
    return SG_OK;
}

#else /* !SG_HAVE_CUDA */

int32_t sg_dsl_capability(int device) {
    (void)device;
    return 0;
}

bool sg_dsl_ready(const sg_dsl_artifact *a, int device) {
    (void)a, (void)device;
    return false;
}

sg_status sg_dsl_launch(const sg_dsl_artifact *a, int device, const uint32_t grid[3], void **args,
                        void *stream) {
    (void)stream;
    sg_status st = check_launch(a, device, grid, args);
    if (st) return st;
    return sg_error(SG_EDEVICE, "sg_dsl_launch: %s: " NO_CUDA, a->prefix);
}

sg_status sg_dsl_preload(int device) {
    return sg_error(SG_EDEVICE, "sg_dsl_preload: cuda:%d: " NO_CUDA, device);
}

#endif
