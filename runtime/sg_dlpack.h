/* sg_dlpack.h: DLPack import and export (placeholder until written). */
#ifndef SG_DLPACK_H
#define SG_DLPACK_H
#include "sg_tensor.h"
#endif
