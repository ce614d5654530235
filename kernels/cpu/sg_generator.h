/* sg_generator.h: the CPU random number generator behind rand, randn, normal, uniform_ and
 * bernoulli (Generator? arguments; NULL means the default generator).
 *
 * It is PyTorch's CPUGeneratorImpl: a 32-bit Mersenne Twister (mt19937) seeded with the low
 * 32 bits of a 64-bit seed, drawn 32 bits at a time (random) or as two draws, high word first
 * (random64), the second value of each scalar Box-Muller pair kept for the next normal sample.
 * The kernels transform the draws as aten's CPU kernels do, in the same order (the
 * TensorIterator's: memory order), so one seed gives PyTorch's values.
 *
 * Which of aten's kernels: PyTorch builds its distribution kernels per CPU capability. Its x86
 * AVX2 and AVX512 builds (what PyTorch runs on any recent x86 CPU) fuse the multiply-adds of
 * the affine maps, and fill float32 normals with a vectorised Cephes log and sincos; its
 * portable build (ATEN_CPU_CAPABILITY=default, and non-x86 CPUs) rounds each product and calls
 * logf, cosf and sinf. On x86-64 the kernels follow the vector build unless the environment
 * says ATEN_CPU_CAPABILITY=default (read when the kernels are registered), as PyTorch does;
 * elsewhere the portable one.
 *
 * Checked against PyTorch 2.11 (both builds) to the bit, for seeds and shapes the tests list:
 *   rand / uniform_(from, to): float32 (24 bits of a 32-bit draw), float64 (53 bits of a 64-bit
 *     draw), float16 (11 bits), bfloat16 (8 bits), contiguous or strided;
 *   randn / normal_(mean, std): float64 (any size: the scalar Box-Muller below 16 elements or
 *     when non-contiguous, r = sqrt(-2 log1p(-u2)), theta = 2 pi u1, the sine cached; blocks
 *     of 16 otherwise, uniforms first and a partial last block redrawn); float32 likewise, the
 *     blocks of 16 through the vector (or portable) log and sincos;
 *   bernoulli_(p: float): a 53-bit uniform per element compared with p, as aten's kernel
 *     without MKL; bernoulli_(p: Tensor): 53-bit uniforms for a float64 p, 24-bit otherwise.
 * Statistically equal only: float16 and bfloat16 normals (worked in float and rounded once,
 * where aten rounds each step to the 16-bit type; the draws consumed are the same), and
 * bernoulli_(p: float) against PyTorch builds with MKL, which draw it through MKL's stream.
 *
 * PyTorch seeds its global CPU generator from the system at start-up; ours starts at
 * SG_GENERATOR_DEFAULT_SEED, the seed of a fresh torch.Generator(), so runs are reproducible:
 * torch.Generator().manual_seed(s) and sg_generator_manual_seed(NULL, s) give one stream.
 * Every use locks the generator, so one may be shared by threads (draws are serialised). */
#ifndef SG_GENERATOR_H
#define SG_GENERATOR_H

#include "sg_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* c10::detail::default_rng_seed_val */
#define SG_GENERATOR_DEFAULT_SEED UINT64_C(67280421310721)

/* A new generator seeded with seed (free with sg_generator_free). */
sg_status     sg_generator_new(uint64_t seed, sg_generator **out);
void          sg_generator_free(sg_generator *g); /* NULL and the default are no-ops */
/* The generator NULL stands for: seeded with SG_GENERATOR_DEFAULT_SEED on first use. */
sg_generator *sg_generator_default(void);
/* Restarts g's stream (NULL: the default generator's), as torch's manual_seed. */
void          sg_generator_manual_seed(sg_generator *g, uint64_t seed);
/* The seed g was last seeded with (NULL: the default generator). */
uint64_t      sg_generator_initial_seed(sg_generator *g);
/* For counter-based device generators (CUDA's Philox): reserves n stream numbers of g (NULL:
 * the default generator) past those already handed out: *seed gets g's seed and *offset the
 * first number reserved. Seeding g restarts them at 0; the Mersenne Twister's stream is
 * untouched. */
void          sg_generator_philox_reserve(sg_generator *g, uint64_t n, uint64_t *seed,
                                          uint64_t *offset);
/* Raw draws, as CPUGeneratorImpl::random() and random64(). */
uint32_t      sg_generator_random(sg_generator *g);
uint64_t      sg_generator_random64(sg_generator *g);

#ifdef __cplusplus
}
#endif
#endif
