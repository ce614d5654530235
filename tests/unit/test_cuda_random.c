/* test_cuda_random.c: aten::rand on GPU 0 (kernels/cuda/random.cu) in each floating dtype, as
 * aten's uniform_real_distribution draws: every value in [0, 1) and a multiple of 2^-digits
 * (sg_dtype_digits: 24 for float32, 11 for float16, 8 for bfloat16, 53 for float64), spread
 * over the range (mean near 1/2, more than a few distinct values), and the same seed gives
 * the same bytes. Skips (77) where no GPU is usable. */
#include "check.h"
#include "sg_aten_cuda.h"
#include "sg_generator.h"
#include "sg_iter.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aten.h"

enum { N = 4096 };

/* N draws of dt on GPU 0 from generator seed, as float64 on the host; false on failure. */
static bool draw(sg_dtype dt, uint64_t seed, double *v) {
    sg_generator *g = NULL;
    sg_device     dev = SG_CUDA(0);
    sg_tensor    *r = NULL, *d = NULL, *h = NULL;
    bool          ok = sg_generator_new(seed, &g) == SG_OK &&
             aten_rand_generator((sg_int_list){(int64_t[]){N}, 1}, g, &dt, NULL, &dev, NULL, &r) ==
                 SG_OK &&
             sg_cast(r, SG_FLOAT64, &d) == SG_OK && sg_tensor_to(d, SG_CPU, &h) == SG_OK;
    if (ok) memcpy(v, sg_tensor_data(h), N * sizeof *v);
    sg_tensor_release(r), sg_tensor_release(d), sg_tensor_release(h);
    sg_generator_free(g);
    return ok;
}

static void check_dtype(sg_dtype dt) {
    static double v[N], w[N];
    int           digits = sg_dtype_digits(dt);
    CHECK(draw(dt, 1234, v) && draw(dt, 1234, w));
    CHECK(memcmp(v, w, sizeof v) == 0);
    double sum = 0, unit = ldexp(1.0, digits);
    int    bad = 0, distinct = 0;
    for (int i = 0; i < N; i++) {
        double k = v[i] * unit;
        bad += !(v[i] >= 0 && v[i] < 1 && k == floor(k));
        distinct += i == 0 || v[i] != v[i - 1];
        sum += v[i];
    }
    if (bad) fprintf(stderr, "test_cuda_random: %s: %d values off the grid of 2^-%d\n",
                     sg_dtype_name(dt), bad, digits);
    CHECK(bad == 0);
    CHECK(fabs(sum / N - 0.5) < 0.05);
    CHECK(distinct > N / 4);
}

int main(void) {
    const char *why = NULL;
    if (sg_device_count(SG_DEV_CUDA, &why) < 1) {
        fprintf(stderr, "test_cuda_random: no CUDA device (%s): skipped\n", why ? why : "none");
        return 77;
    }
    CHECK(sg_aten_cuda_init() == SG_OK);
    const sg_dtype dts[] = {SG_FLOAT32, SG_FLOAT16, SG_BFLOAT16, SG_FLOAT64};
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) check_dtype(dts[i]);
    return check_result("test_cuda_random");
}
