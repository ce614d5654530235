/* sg_dsl.h: kernels a DSL compiled ahead of time (docs/dsl.md): registration, per-device lazy
 * loading, launching, switches and listing. schemagen's LIB_dsl.c declares one sg_dsl_artifact
 * per compiled binary, with a static sg_dsl_slot for its run-time state, and calls these.
 *
 * An artifact is one of two kinds. An image artifact holds a binary (a cubin) that the runtime
 * loads and launches through the CUDA driver API, reached through the CUDA runtime's entry-point
 * query, so the library still loads on a machine without a driver. An object artifact is a DSL's
 * own loader and entry, linked into the program (CuTeDSL's export_to_c): the runtime calls its
 * load and run hooks instead of the driver.
 *
 * An image artifact is loaded on a device at its first use there (sg_dsl_ready, sg_dsl_launch)
 * or by sg_dsl_preload, once: concurrent first calls wait for one load. An object artifact's
 * loader loads into every device at once, so it runs once per process, at the first such call
 * on any device; its outcome then holds on every device of the artifact's capability. A failed
 * load marks the artifact failed on the device (for an object artifact, on all of them); it
 * declines from then on and sg_dsl_failure keeps the first such message. Nothing here prints.
 *
 * Without SG_HAVE_CUDA: registration, listing and switches work; sg_dsl_ready is false,
 * sg_dsl_capability 0, and sg_dsl_launch and sg_dsl_preload fail with SG_EDEVICE, "this build
 * has no CUDA support".
 */
#ifndef SG_DSL_H
#define SG_DSL_H

#include "sg_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device indices an artifact keeps state for (sg_device.index is an int8_t). */
#define SG_DSL_MAX_DEVICES 128

typedef struct sg_dsl_artifact sg_dsl_artifact;

/* The run-time state of one artifact. Private to the runtime: define one per artifact, static,
 * initialised with SG_DSL_SLOT_INIT, and do not touch its fields. Rationale: a static object
 * needs no allocation at registration (which then cannot fail for memory) and makes the loaded
 * check on the call path two loads of memory the artifact owns. */
typedef struct sg_dsl_slot {
    uint8_t                off;                          /* a switch turns it off */
    uint8_t                state[SG_DSL_MAX_DEVICES];    /* 0 not loaded, 1 loaded, 2 failed */
    uint8_t                loader;                       /* object: load()'s outcome, as state */
    int32_t                loader_error;                 /* object: what a failed load() gave */
    void                  *func[SG_DSL_MAX_DEVICES];     /* the CUfunction, per device */
    void                  *ctx[SG_DSL_MAX_DEVICES];      /* the CUcontext it was loaded in */
    uint64_t               launches;                     /* kernels launched, all devices */
    uint32_t               loads;                        /* successful loads, all devices */
    char                  *failure;                      /* the first load failure's message */
    const sg_dsl_artifact *next;                         /* registration order */
} sg_dsl_slot;
#ifdef __cplusplus
#define SG_DSL_SLOT_INIT {}
#else
#define SG_DSL_SLOT_INIT {0}
#endif

/* One compiled kernel and what launching it needs, from its sidecar: an image artifact (image
 * and image_size set, no hooks) or an object artifact (load and run set, image NULL). */
struct sg_dsl_artifact {
    const char          *prefix;   /* unique: "rms_norm_triton__float32_1024__sm90" */
    const char          *op;       /* the op it serves: "aten::_fused_rms_norm" */
    const char          *dsl;      /* "triton" */
    const char          *symbol;   /* the entry in the binary (an object's: its wrapper) */
    int32_t              cc_major, cc_minor; /* the exact capability it was built for */
    const unsigned char *image;    /* the cubin */
    size_t               image_size;
    /* An object artifact (a DSL that links its own loader and entry, CuTeDSL's export_to_c):
     * image is NULL, and these stand in for the driver calls. load loads the kernels into every
     * device and returns a cudaError_t value (0: loaded); run runs the entry on the current
     * device on `stream` with args (one pointer per declared parameter) and returns one.
     * block_x and shared are not read for an object artifact (0 is fine). load runs under the
     * runtime's lock and run on the call path: neither may call back into sg_dsl_*. */
    int                 (*load)(void);
    int                 (*run)(void **args, void *stream);
    uint32_t             block_x;  /* threads per block (num_warps * 32): 1..1024 */
    uint32_t             shared;   /* dynamic shared memory per block, bytes */
    uint32_t             nparams;  /* the pointers args holds (hidden parameters included) */
    sg_dsl_slot         *slot;
};

/* Makes an artifact known (listing, preload, switches). The artifact and its slot must live as
 * long as the process; registering the same one again is a no-op. SG_EINVAL for a NULL or
 * incomplete artifact (no prefix, op, DSL, symbol or slot; neither an image nor both hooks; one
 * hook without the other; hooks beside an image; an image artifact's block_x outside 1..1024),
 * SG_EEXISTS for another artifact with the same prefix or the same slot. */
sg_status sg_dsl_register(const sg_dsl_artifact *a);

/* Whether the artifact can be launched on CUDA device `device` now: loads it there on first use.
 * False where it is switched off, was built for another capability, failed to load there, the
 * device does not exist, or it is not loaded yet and the thread's current stream of the device
 * is capturing a CUDA graph (loading is invalid during capture; sg_dsl_preload first). Never
 * touches the thread's error message: sg_dsl_failure says why a load failed. */
bool      sg_dsl_ready(const sg_dsl_artifact *a, int device);

/* The compute capability of CUDA device `device` as 10 * major + minor (90 for 9.0), read
 * once per device; 0 where unknown (no such device, no CUDA). A negative device initialises
 * nothing. */
int32_t   sg_dsl_capability(int device);

/* Whether a grid of x * y * z blocks is within CUDA's limits (x up to 2^31-1, y and z up to
 * 65535; 0 fits and launches nothing). For predicates: the grid is computed as int64 from the
 * arguments, tested here, and only then narrowed for sg_dsl_launch, so a call whose grid does
 * not fit declines instead of failing or wrapping. */
static inline bool sg_dsl_grid_fits(int64_t x, int64_t y, int64_t z) {
    return x >= 0 && y >= 0 && z >= 0 && x <= 0x7fffffff && y <= 65535 && z <= 65535;
}

/* Launches the artifact on `device` over grid[0..2] blocks of block_x threads with its dynamic
 * shared memory, on `stream` (a cudaStream_t; NULL: the legacy default stream). args holds a
 * pointer to each of the kernel's nparams parameters. Loads the artifact first where it is not
 * loaded. A grid with a zero dimension launches nothing and returns SG_OK. SG_EINVAL for a
 * grid beyond CUDA's limits (x above 2^31-1, y or z above 65535) or NULL arguments; SG_EDEVICE
 * where it cannot be loaded or the launch fails, with the artifact, device and CUDA's text.
 * An object artifact's entry picks its own grid: the grid given only says whether to run (a
 * zero dimension runs nothing and returns SG_OK; other values are ignored, the limits too), and
 * run(args, stream) is called with the device current; SG_EDEVICE with CUDA's error name where
 * it returns non-zero. */
sg_status sg_dsl_launch(const sg_dsl_artifact *a, int device, const uint32_t grid[3], void **args,
                        void *stream);

/* Loads every registered artifact that is switched on and built for the capability of
 * `device` (before capturing a CUDA graph). Tries them all; SG_EDEVICE, naming how many failed
 * and the first failure, where any did (those decline from then on); SG_ESTATE where the
 * thread's current stream of the device is capturing. */
sg_status sg_dsl_preload(int device);

/* Switches artifacts on or off by DSL ("triton") or by op: a name with "::" is an op, matched
 * whole ("aten::add.Tensor") or, without an overload, every overload of it ("aten::add").
 * Applies to artifacts registered before and after. SG_DSL_DISABLE and SG_DSL_DISABLE_OPS
 * (comma-separated names) are read once, at the first call here. SG_EINVAL for an empty name
 * or one with a comma or space. Loaded modules stay loaded. */
sg_status sg_dsl_set_enabled(const char *dsl_or_op, bool on);
/* Whether a switch turns the artifact off. */
bool      sg_dsl_enabled(const sg_dsl_artifact *a);

/* The registered artifacts, in registration order: up to cap of them into out (out may be
 * NULL where cap is 0); returns how many there are. */
size_t    sg_dsl_list(const sg_dsl_artifact **out, size_t cap);

/* The first load failure of the artifact ("" where none): the device, what failed, CUDA's
 * text. Stays valid for the process. */
const char *sg_dsl_failure(const sg_dsl_artifact *a);
/* Whether the artifact is loaded / failed on `device` (no loading). */
bool      sg_dsl_loaded(const sg_dsl_artifact *a, int device);
bool      sg_dsl_failed(const sg_dsl_artifact *a, int device);
/* Counts since the process started, over all devices: kernels launched (zero grids not
 * counted) and successful loads. For tests and tools that check which kernel ran. */
uint64_t  sg_dsl_launch_count(const sg_dsl_artifact *a);
uint32_t  sg_dsl_load_count(const sg_dsl_artifact *a);

#ifdef __cplusplus
}
#endif
#endif
