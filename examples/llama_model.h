/* llama_model.h: the Llama-style block of examples/llama_block.c, shared with the autograd
 * benchmark (bench/autograd.c): its weights from a counter-based generator that
 * examples/llama_block_ref.py reproduces, its forward written against the generated aten API,
 * the training loss and an SGD step. */
#ifndef LLAMA_MODEL_H
#define LLAMA_MODEL_H

#include "aten.h"

enum { T = 32, D = 256, H = 8, HD = D / H, HIDDEN = 688, LLAMA_NPARAMS = 9 };

typedef struct block {
    sg_tensor *wq, *wk, *wv, *wo;   /* [D, D] (out, in), as torch.nn.Linear */
    sg_tensor *w_gate, *w_up;       /* [HIDDEN, D] */
    sg_tensor *w_down;              /* [D, HIDDEN] */
    sg_tensor *norm1, *norm2;       /* [D] */
    sg_tensor *cos, *sin;           /* [T, HD] */
} block;

/* The call that failed last in llama_forward (its source text), for messages. */
extern const char *llama_where_failed;
/* The parameters' names, in llama_param's order. */
extern const char *const llama_param_names[LLAMA_NPARAMS];

/* A float32 CPU tensor of the given shape, filled from seed (uniform in [-1, 1)) and scaled. */
sg_status   llama_filled(uint64_t seed, double scale, const int64_t *sizes, int32_t n,
                         sg_tensor **out);
sg_status   llama_make(block *b);
void        llama_free(block *b);
/* Moves *t (or every tensor of b) to dev; a no-op for the CPU. */
sg_status   llama_move(sg_tensor **t, sg_device dev);
sg_status   llama_move_block(block *b, sg_device dev);
/* Waits for the device's queued work. */
sg_status   llama_sync(sg_device dev);
sg_tensor **llama_param(block *b, int i);
/* The block on x ([T, D]). */
sg_status   llama_forward(const block *b, sg_tensor *x, sg_tensor **out);
/* mean((forward(x) - target)^2) */
sg_status   llama_loss(const block *b, sg_tensor *x, sg_tensor *target, sg_tensor **loss);
/* p.add_(p.grad, alpha=-lr) for every parameter under no_grad (torch.optim.SGD's update), the
 * gradients cleared. */
sg_status   llama_sgd(block *b, double lr);

#endif
