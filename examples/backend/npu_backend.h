/* npu_backend.h: the example backend (docs/backend.md): PrivateUse1 renamed "npu", host memory
 * from an allocator of its own, add.Tensor and mul.Tensor kernels of its own (float32 tensors of
 * one shape) and the CPU fallback for every other op. npu_backend.c has it; main.c is the demo
 * that runs it, and tests/unit/test_cpu_reference.c (test_npu_conformance) runs PyTorch's
 * conformance cases on it. */
#ifndef NPU_BACKEND_H
#define NPU_BACKEND_H

#include "sg_runtime.h"

#define NPU0 ((sg_device){SG_DEV_PRIVATEUSE1, 0})

/* What the backend has done since the process started, for the demo's and the tests' checks. */
typedef struct npu_counts {
    long allocs, frees; /* by its allocator */
    long syncs;         /* sg_device_synchronize */
    long native;        /* calls its own kernels computed */
    long handed;        /* calls its own kernels handed to the CPU fallback (no fast path) */
    long fallback;      /* calls the CPU fallback ran, handed ones included */
} npu_counts;

/* Registers the device, its name, its kernels and the fallback (after sg_aten_cpu_init). */
sg_status npu_backend_init(void);

npu_counts npu_backend_counts(void);

#endif
