/* helpers_matmul.c: matmul's backward helper (schemas/autograd.yaml), for every rank pair
 * matmul takes: 1-D operands and broadcast batch dims. Aten calls only (matmul itself, below
 * autograd), so it runs on any device. */
#include "helpers_util.h"

/* matmul's: with a 1-D self made [1, k] and a 1-D other [k, 1] (grad given the same dims),
 * grad_self = grad @ other^T and grad_other = self^T @ grad, each summed down to its
 * operand's (broadcast) shape and the added dim dropped again. */
static sg_status matmul_side(sg_tensor *a, bool ta, sg_tensor *b, bool tb,
                             const sg_tensor *like, int64_t drop, sg_tensor **ret) {
    /* drop: the dim (negative) the 1-D operand added, squeezed away; 0: none */
    sg_tensor *at = NULL, *bt = NULL, *p = NULL, *s = NULL;
    sg_status st = SG_OK;
    if (ta) TRY(aten_transpose_int(a, -1, -2, &at));
    if (tb) TRY(aten_transpose_int(b, -1, -2, &bt));
    TRY(aten_matmul(ta ? at : a, tb ? bt : b, &p));
    if (drop) TRY(aten_squeeze_dim(p, drop, &s));
    else s = sg_tensor_retain(p);
    TRY(autograd_sum_to(s, (sg_int_list){like->sizes, like->ndim}, ret));
done:
    RELEASE(at, bt, p, s);
    return st;
}

sg_status sg_agf_matmul_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *self,
                                 sg_tensor *other, sg_bool_list mask, sg_tensor **gs,
                                 sg_tensor **go) {
    (void)ks;
    if (mask.len != 2)
        return sg_error(SG_EINVAL, "autograd::matmul_backward: the mask has %d entries, not 2",
                        (int)mask.len);
    if (!grad) return SG_OK;
    sg_status st = agf_real("matmul_backward", grad);
    if (st == SG_OK) st = agf_real("matmul_backward", self);
    if (st == SG_OK) st = agf_real("matmul_backward", other);
    if (st != SG_OK) return st;
    if (!self->ndim || !other->ndim)
        return sg_error(SG_EINVAL, "autograd::matmul_backward: a 0-dim operand");
    sg_tensor *a = NULL, *b = NULL, *g = NULL;
    bool v1 = self->ndim == 1, v2 = other->ndim == 1;
    if (v1) TRY(aten_unsqueeze(self, 0, &a));
    else a = sg_tensor_retain(self);
    if (v2) TRY(aten_unsqueeze(other, 1, &b));
    else b = sg_tensor_retain(other);
    /* grad's dims: a's row dim where self was 1-D, b's column dim where other was */
    if (v1 && v2) {
        const int64_t one[2] = {1, 1};
        TRY(aten_reshape(grad, (sg_int_list){one, 2}, &g));
    } else if (v1) {
        TRY(aten_unsqueeze(grad, -2, &g));
    } else if (v2) {
        TRY(aten_unsqueeze(grad, -1, &g));
    } else {
        g = sg_tensor_retain(grad);
    }
    if (mask.items[0]) {
        TRY(matmul_side(g, false, b, true, self, v1 ? -2 : 0, gs));
    }
    if (mask.items[1]) {
        TRY(matmul_side(a, true, g, false, other, v2 ? -1 : 0, go));
    }
done:
    RELEASE(a, b, g);
    if (st != SG_OK) {
        sg_tensor_release(*gs), sg_tensor_release(*go);
        *gs = *go = NULL;
    }
    return st;
}
