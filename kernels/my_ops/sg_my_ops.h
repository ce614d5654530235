/* sg_my_ops.h: the my_ops custom-op library (schemas/my_ops.yaml), built beside aten. */
#ifndef SG_MY_OPS_H
#define SG_MY_OPS_H

#include "my_ops.h"

/* Defines the my_ops ops and registers their kernels (my_ops_init), after aten's CPU kernels,
 * which they use. */
sg_status sg_my_ops_init(void);

#endif
