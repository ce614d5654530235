/* rt_autograd.h: what autograd.c and autograd_engine.c share and users do not see. */
#ifndef SG_RT_AUTOGRAD_H
#define SG_RT_AUTOGRAD_H

#include "rt_internal.h"
#include "sg_autograd.h"

/* A tensor's autograd state (sg_tensor.ag), made the first time a tensor needs one. */
struct sg_ag_meta {
    sg_node   *grad_fn;       /* a reference; NULL for a leaf */
    sg_node   *acc;           /* a leaf's accumulator, without a reference (it holds the leaf
                                 and clears this as it goes) */
    sg_tensor *grad;          /* a reference, or NULL */
    uint32_t   output_nr;     /* which output of grad_fn */
    bool       requires_grad; /* a leaf's flag */
    sg_tensor *base;          /* a view made while recording: its base (a reference; never a
                                 view itself), whose history in-place writes rebase
                                 (CopySlices, autograd_view.c) */
    uint32_t   view_version;  /* the version the view's grad_fn was made at: after another
                                 change it is made again from the base's history */
    bool       view_no_grad;  /* a view made under no_grad of a tensor that requires grad */
};

/* The view's grad_fn made again from its base's history, where a change since it was made
 * (an in-place write through the view, the base or another view) left it stale. */
sg_status sg__view_refresh(sg_tensor *t);

/* The accumulator of a leaf (PyTorch's AccumulateGrad): one input, no edges. */
typedef struct sg__acc_node {
    sg_node    base;
    sg_tensor *leaf; /* a reference */
} sg__acc_node;

/* The accumulator's apply (autograd_engine.c): .grad = grad, or .grad + grad. */
sg_status sg__acc_apply(sg_node *n, sg_tensor *const *grads, sg_tensor **out);

/* The accumulator of leaf t (which requires grad): the one the leaf has, retained, or a new
 * one. */
sg_status sg__acc_get(sg_tensor *t, sg_node **out);

#endif
