/* when_c_gate.c: a `when_c` function as a user writes one in a real .c file (docs/dsl.md): the
 * declaration tests/dsl_artifacts.sh makes from rms_norm.yaml names it with
 * `when_c: rms_gate`. It says what the predicate language cannot: that the weight does not
 * overlap the input in memory. It includes the generated LIB_dsl.h, so the compiler checks
 * this definition against the prototype the predicates call. The counters are for the test
 * only: a real when_c function is pure (no allocation, no CUDA call, no state). */
#include "dslc_dsl.h"

#include <stdint.h>

int rms_gate_calls;
const sg_tensor *rms_gate_input;
int64_t rms_gate_shape0 = -1;

bool rms_gate(sg_tensor *input, sg_int_list normalized_shape, sg_tensor *weight,
              const double *eps) {
    (void)eps;
    rms_gate_calls++;
    rms_gate_input = input;
    rms_gate_shape0 = normalized_shape.len == 1 ? normalized_shape.items[0] : -1;
    /* `when` made sure both are present and contiguous: each spans nbytes from its data */
    uintptr_t x = (uintptr_t)sg_tensor_data(input), w = (uintptr_t)sg_tensor_data(weight);
    return x + sg_tensor_nbytes(input) <= w || w + sg_tensor_nbytes(weight) <= x;
}
