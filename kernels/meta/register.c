/* register.c: the Meta kernels' shared helpers and their registration, which sg_aten_cpu_init
 * does with the CPU kernels' (one call gives both devices). */
#include "meta.h"

sg_status sg_meta_out_ready(const char *op, sg_tensor *out, const sg_meta *m, bool exact) {
    if (!sg_device_eq(out->device, m->device))
        return sg_error(SG_EINVAL, "%s: expected out on %s, like the inputs, but got one on %s", op,
                        sg_device_type_name((sg_device_type)m->device.type),
                        sg_device_type_name((sg_device_type)out->device.type));
    return sg_index_out_ready(op, out, m, exact);
}

sg_status sg_meta_data_dependent(const char *op) {
    return sg_error(SG_EUNSUPPORTED,
                    "%s: its result's shape depends on the data of its inputs, which Meta "
                    "tensors do not have: not implemented for Meta",
                    op);
}

sg_status sg_aten_meta_register(void) {
    sg_status st = sg_meta_register_structured();
    return st ? st : sg_meta_register_ops();
}
