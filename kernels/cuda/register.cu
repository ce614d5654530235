/* register.cu: the aten library's CUDA kernels, registered in one call. */
#include "cu.cuh"
#include "sg_aten_cuda.h"
#ifdef SG_HAVE_DSL_KERNELS
#include "aten_dsl.h"
#endif

int sg_cu_sm_count(void) {
    static int count[64];
    int        dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) return 132;
    int n = __atomic_load_n(&count[dev], __ATOMIC_RELAXED);
    if (!n) {
        if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n <= 0)
            n = 132;
        __atomic_store_n(&count[dev], n, __ATOMIC_RELAXED);
    }
    return n;
}

extern "C" sg_status sg_aten_cuda_init(void) {
    static uint64_t done; /* the runtime epoch they were registered in */
    sg_status       st = sg_aten_cpu_init();
    uint64_t        now = sg_runtime_epoch();
    if (st || __atomic_exchange_n(&done, now, __ATOMIC_ACQ_REL) == now) return st;
    sg_status (*const families[])(void) = {
        sg_cu_register_cast,   sg_cu_register_pointwise, sg_cu_register_reduce,
        sg_cu_register_norm,   sg_cu_register_linalg,    sg_cu_register_index,
        sg_cu_register_factory,
    };
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if ((st = families[i]())) return st;
#ifdef SG_HAVE_DSL_KERNELS
    /* in front of the stock CUDA kernels: each declines to them where its predicate is false */
    if ((st = aten_dsl_init())) return st;
#endif
    return SG_OK;
}
