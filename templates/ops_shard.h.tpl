%! output = "{lib}_{shard}.h", per_shard = true
% local C = import "c"
/* $(output): the typed C API of the $(#ops) ops of shard $(shard) of $(lib) (docs in $(lib).h,
 * which includes every shard's header).
 * $(C.comment(banner)) */
#ifndef SG_GEN_$(lib:upper())_$(shard)_H
#define SG_GEN_$(lib:upper())_$(shard)_H

#include "sg_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Registers this shard's generated composite kernels ($(lib)_init calls it). */
sg_status $(lib)_boxed_composites_$(shard)(void);
/* Gives this shard's ops their boxed entries (sg_op_set_boxed_entry; $(lib)_init calls it). */
sg_status $(lib)_boxed_entries_$(shard)(void);
/* Registers fn, a typed kernel of op, with this shard's boxing adapter number `adapter`: what
 * each op's _register below does. */
sg_status $(lib)_boxed_register_$(shard)(sg_op *op, unsigned adapter, sg_key key, sg_fn fn,
    sg_handle **out);
/* Registers a typed override of op (pred, impl), with this shard's adapter number `adapter`
 * and op's redispatch for boxed calls: what each op's _override below does. */
sg_status $(lib)_boxed_override_$(shard)(sg_op *op, unsigned adapter, sg_key key,
    int32_t priority, sg_fn pred, sg_fn impl, void *ctx, sg_fn redispatch, sg_handle **out);
% local _, adapter = C.shard_adapters(ops)

% for _, op in ipairs(ops) do
%   local cn = op.cname
/* $(C.comment(op.schema)) */
extern sg_op *$(cn)_op;
%   local c = C.info(op)
%   if c.typed then
%     local params = c.params
%     -- Rationale: the parameter list is written once, in a function type; the wrapper, the
%     -- kernel type and the rest are declared from it (a smaller header parses faster in
%     -- every file that includes it).
typedef sg_status $(cn)_fn(sg_keyset ks$(params == "void" and "" or ", " .. params));
typedef $(cn)_fn *$(cn)_kernel;
$(cn)_fn $(cn)_redispatch;
sg_status $(cn)($(params));
static inline sg_status $(cn)_register(sg_key key, $(cn)_kernel fn, sg_handle **out) {
    return $(lib)_boxed_register_$(shard)($(cn)_op, $(adapter[c.boxed_name]), key, (sg_fn)fn, out);
}
typedef bool $(cn)_pred_fn(void *sg_ctx, sg_keyset ks$(c.in_params == "" and "" or ", " .. c.in_params));
static inline sg_status $(cn)_override(sg_key key, int32_t priority, $(cn)_pred_fn *pred,
                                       $(cn)_kernel impl, void *ctx, sg_handle **out) {
    return $(lib)_boxed_override_$(shard)($(cn)_op, $(adapter[c.boxed_name]), key, priority, (sg_fn)pred, (sg_fn)impl, ctx,
                                           (sg_fn)$(cn)_redispatch, out);
}
%     if op.structured_is_out then
/* structured: its functional and in-place variants run this meta function, then this op */
typedef sg_status (*$(cn)_meta_fn)($(C.meta_params(op)));
extern $(cn)_meta_fn $(cn)_meta;
void $(cn)_set_meta($(cn)_meta_fn fn);
%     end
%     if op.composite then
$(cn)_fn $(cn)_composite; /* the generator's kernel ($(op.composite)) */
%     end
%   end

% end
#ifdef __cplusplus
}
#endif
#endif
