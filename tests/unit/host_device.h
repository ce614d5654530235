/* host_device.h: a PrivateUse device for tests whose memory is host memory (malloc), so a test
 * can give a backend of its own kernels and still read what they wrote. One device. */
#ifndef SG_TEST_HOST_DEVICE_H
#define SG_TEST_HOST_DEVICE_H

#include "sg_tensor.h"

#include <stdlib.h>
#include <string.h>

static int host_dev_count(const char **why) {
    (void)why;
    return 1;
}
static sg_status host_dev_alloc(sg_device d, size_t n, void **data, void **ctx) {
    (void)d;
    *ctx = NULL;
    *data = malloc(n ? n : 1);
    return *data ? SG_OK : sg_error(SG_ENOMEM, "host device: out of memory");
}
static void host_dev_free(sg_device d, void *data, void *ctx) {
    (void)d, (void)ctx;
    free(data);
}
static sg_status host_dev_in(sg_device d, void *dst, const void *src, size_t n) {
    (void)d;
    memcpy(dst, src, n);
    return SG_OK;
}
static sg_status host_dev_out(void *dst, sg_device d, const void *src, size_t n) {
    (void)d;
    memcpy(dst, src, n);
    return SG_OK;
}
static const sg_device_impl host_device = {.name = "dev", .count = host_dev_count,
                                           .alloc = host_dev_alloc, .free = host_dev_free,
                                           .copy_from_host = host_dev_in,
                                           .copy_to_host = host_dev_out};

#endif
