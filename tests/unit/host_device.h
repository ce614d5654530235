/* host_device.h: a PrivateUse device for tests whose memory is host memory (malloc), so a test
 * can give a backend of its own kernels and still read what they wrote. One device; a test
 * that wants more, or hooks, builds its own sg_device_impl from these functions.
 * host_dev_allocs counts the allocations, so a test can see the device's allocator used. */
#ifndef SG_TEST_HOST_DEVICE_H
#define SG_TEST_HOST_DEVICE_H

#include "sg_tensor.h"

#include <stdlib.h>
#include <string.h>

static int host_dev_allocs;

static inline int host_dev_count(const char **why) {
    (void)why;
    return 1;
}
static inline sg_status host_dev_alloc(sg_device d, size_t n, void **data, void **ctx) {
    (void)d;
    *ctx = NULL;
    *data = malloc(n ? n : 1);
    host_dev_allocs++;
    return *data ? SG_OK : sg_error(SG_ENOMEM, "host device: out of memory");
}
static inline void host_dev_free(sg_device d, void *data, void *ctx) {
    (void)d, (void)ctx;
    free(data);
}
static inline sg_status host_dev_in(sg_device d, void *dst, const void *src, size_t n) {
    (void)d;
    memcpy(dst, src, n);
    return SG_OK;
}
static inline sg_status host_dev_out(void *dst, sg_device d, const void *src, size_t n) {
    (void)d;
    memcpy(dst, src, n);
    return SG_OK;
}
__attribute__((unused)) static const sg_device_impl host_device = {.name = "dev", .count = host_dev_count,
                                           .alloc = host_dev_alloc, .free = host_dev_free,
                                           .copy_from_host = host_dev_in,
                                           .copy_to_host = host_dev_out};

#endif
