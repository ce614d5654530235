/* scaled_dot_product_attention's dropout on CUDA (sdpa_dropout.h: the same laws the CPU test
 * checks). Skips (77) where no GPU is usable. */
#include "check.h"
#include "sdpa_dropout.h"
#include "sg_aten_cuda.h"

int main(void) {
    const char *why = NULL;
    if (sg_device_count(SG_DEV_CUDA, &why) < 1) {
        fprintf(stderr, "no CUDA device (%s): skipped\n", why ? why : "none found");
        return 77;
    }
    CHECK(sg_aten_cuda_init() == SG_OK);
    check_sdpa_dropout(SG_CUDA(0));
    sg_runtime_shutdown();
    return check_result("test_cuda_attention");
}
