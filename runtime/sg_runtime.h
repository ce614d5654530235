/* sg_runtime.h: the whole runtime API: tensors and devices (sg_tensor.h), boxed values
 * (sg_any.h), ops, dispatch and registration (sg_dispatch.h), DLPack (sg_dlpack.h), the CUDA
 * backend's per-thread state (sg_cuda.h), kernels a DSL compiled ahead of time (sg_dsl.h), the
 * types of generated typed APIs (sg_api.h), what a backend author uses (sg_backend.h), and
 * autograd's core: grad mode, graph nodes, saved values, the engine (sg_autograd.h). */
#ifndef SG_RUNTIME_H
#define SG_RUNTIME_H

#include "sg_base.h"
#include "sg_tensor.h"
#include "sg_any.h"
#include "sg_dispatch.h"
#include "sg_dlpack.h"
#include "sg_cuda.h"
#include "sg_dsl.h"
#include "sg_api.h"
#include "sg_backend.h"
#include "sg_autograd.h"

#endif
