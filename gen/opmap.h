/* opmap.h: op -> its 1-based position in model.ops, for links between ops (groups, structured
 * delegates, autogen sources) that become references to the same tables (lua_model.c). */
#ifndef SG_OPMAP_H
#define SG_OPMAP_H

#include "model.h"

typedef struct opmap {
    const sg_op **keys;
    uint32_t     *vals;
    size_t        cap;
} opmap;

bool     opmap_init(opmap *mp, const sg_model *m); /* false: out of memory (free it all the same) */
uint32_t opmap_get(const opmap *mp, const sg_op *op); /* 0 for an op not in the model */
void     opmap_free(opmap *mp);

#endif
