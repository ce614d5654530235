/* error.c: statuses and the thread-local error slot. */
#include "sg_base.h"
#include "sg_tensor.h"
#include "sg_any.h"

uint64_t sg__error_seq(void); /* rt_dispatch.h */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { MSG_MAX = 1024 };

static _Thread_local char      msg[MSG_MAX];
static _Thread_local sg_status last;
static _Thread_local uint64_t  seq; /* counts the messages set, so a record can tell its own */

static const char *const names[SG_STATUS__COUNT] = {
    [SG_OK] = "SG_OK",           [SG_EINVAL] = "SG_EINVAL",
    [SG_ENOMEM] = "SG_ENOMEM",   [SG_ENOTFOUND] = "SG_ENOTFOUND",
    [SG_ENOKERNEL] = "SG_ENOKERNEL", [SG_EDEVICE] = "SG_EDEVICE",
    [SG_EUNSUPPORTED] = "SG_EUNSUPPORTED", [SG_EEXISTS] = "SG_EEXISTS",
    [SG_EREADONLY] = "SG_EREADONLY", [SG_ESTATE] = "SG_ESTATE",
};

const char *sg_status_name(sg_status s) {
    return (unsigned)s < SG_STATUS__COUNT ? names[s] : "SG_E?";
}

const char *sg_last_error(void) { return msg; }
sg_status   sg_last_status(void) { return last; }

void sg_error_clear(void) {
    msg[0] = '\0';
    last = SG_OK;
    seq++;
}

uint64_t sg__error_seq(void) { return seq; }

sg_status sg_error(sg_status s, const char *fmt, ...) {
    /* Rationale: a message may quote the previous one (wrapping it with context), so it is
     * formatted aside first. */
    char    tmp[MSG_MAX] = "";
    va_list ap;
    va_start(ap, fmt);
    if (fmt) vsnprintf(tmp, sizeof tmp, fmt, ap); /* NULL: the status without a message */
    va_end(ap);
    memcpy(msg, tmp, sizeof msg);
    last = s;
    seq++;
    return s;
}

sg_status sg_runtime_check_abi(int major, int minor, size_t tensor_size, size_t any_size) {
    /* Rationale: before 1.0 a minor version may change the ABI (as 0.2 did sg_device_impl's
     * layout), so it must match; from 1.0 a newer minor only adds. */
    bool minor_ok = SG_RUNTIME_VERSION_MAJOR == 0 ? minor == SG_RUNTIME_VERSION_MINOR
                                                  : minor <= SG_RUNTIME_VERSION_MINOR;
    if (major != SG_RUNTIME_VERSION_MAJOR || !minor_ok)
        return sg_error(SG_EUNSUPPORTED,
                        "runtime version %d.%d linked, but the program was built for %d.%d",
                        SG_RUNTIME_VERSION_MAJOR, SG_RUNTIME_VERSION_MINOR, major, minor);
    if (tensor_size != sizeof(sg_tensor) || any_size != sizeof(sg_any))
        return sg_error(SG_EUNSUPPORTED,
                        "runtime ABI mismatch: sizeof(sg_tensor) %zu vs %zu, sizeof(sg_any) %zu vs %zu",
                        sizeof(sg_tensor), tensor_size, sizeof(sg_any), any_size);
    return SG_OK;
}
