/* sg_dsl.h, as the generator's tests see it where the runtime has none yet: the declarations of
 * the runtime's DSL contract (docs/dsl.md, "At run time") that the generated LIB_dsl.c uses,
 * nothing more. tests/dsl_artifacts.sh puts this folder on the include path only where
 * runtime/sg_dsl.h does not exist; the generated code must compile against both. */
#ifndef SG_DSL_H
#define SG_DSL_H

#include "sg_base.h"

typedef struct sg_dsl_artifact sg_dsl_artifact;

typedef struct sg_dsl_slot {
    uint8_t state[128];
    void   *func[128];
} sg_dsl_slot;
#define SG_DSL_SLOT_INIT {0}

struct sg_dsl_artifact {
    const char          *prefix, *op, *dsl, *symbol;
    int32_t              cc_major, cc_minor;
    const unsigned char *image;
    size_t               image_size;
    uint32_t             block_x, shared, nparams;
    sg_dsl_slot         *slot;
};

sg_status sg_dsl_register(const sg_dsl_artifact *a);
bool      sg_dsl_ready(const sg_dsl_artifact *a, int device);
int32_t   sg_dsl_capability(int device);
sg_status sg_dsl_launch(const sg_dsl_artifact *a, int device, const uint32_t grid[3], void **args,
                        void *stream);

#endif
