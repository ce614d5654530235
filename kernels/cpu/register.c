/* register.c: the aten library's CPU kernels, registered in one call. */
#include "cpu.h"

sg_status sg_aten_cpu_init(void) {
    static uint64_t done; /* the runtime epoch they were registered in */
    sg_status       st = aten_init();
    uint64_t        now = sg_runtime_epoch();
    if (st || __atomic_exchange_n(&done, now, __ATOMIC_ACQ_REL) == now) return st;
    if ((st = sg_cpu_register_pointwise())) return st;
    return SG_OK;
}
