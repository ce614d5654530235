/* register.c: the aten library's CPU kernels and its Meta kernels (kernels/meta/), registered
 * in one call. */
#include "cpu.h"
#include "meta.h"

sg_status sg_aten_cpu_init(void) {
    static uint64_t done; /* the runtime epoch they were registered in */
    sg_status       st = aten_init();
    uint64_t        now = sg_runtime_epoch();
    if (st || __atomic_exchange_n(&done, now, __ATOMIC_ACQ_REL) == now) return st;
    sg_status (*const families[])(void) = {
        sg_cpu_register_pointwise, sg_cpu_register_reduce, sg_cpu_register_linalg,
        sg_cpu_register_norm,      sg_cpu_register_index,  sg_cpu_register_factory,
        sg_cpu_register_views,     sg_aten_meta_register,
    };
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if ((st = families[i]())) return st;
    return SG_OK;
}
