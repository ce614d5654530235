%! output = "{lib}.h"
% local C = import "c"
/* $(lib).h: the typed C API of $(#model.ops) ops.
 * $(C.comment(banner))
 *
 * Per op ns::name.overload (C name ns_name_overload):
 *   ns_name_overload(...)             the typed call: dispatches on its tensors' keys
 *   ns_name_overload_redispatch(ks, ...)  the same, from a kernel, with a key set it narrowed
 *   ns_name_overload_kernel           the C type a kernel for it must have
 *   ns_name_overload_register(key, fn, &handle)  registers a kernel of that type (inline: it
 *                                     passes the kernel and the boxing adapter of its C type)
 * A structured out op also has ns_name_overload_set_meta(fn): its functional and in-place
 * variants then work wherever the out op has a kernel. Variants that `autogen:` asks for, and
 * those structured variants, have kernels written by the generator (ns_name_overload_composite),
 * registered by $(lib)_init for CompositeExplicitAutograd.
 * Arguments map to C types as docs/types.md says; results come back through the trailing
 * pointers (new references for tensors). Call $(lib)_init() once before anything else. */
#ifndef $(lib:upper())_H
#define $(lib:upper())_H

#include "sg_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defines every op with the runtime and registers the generated composite kernels. */
sg_status $(lib)_init(void);

/* The op table, sorted by name and overload, and a lookup in it (NULL where absent). */
extern const sg_op_desc $(lib)_ops[];
extern const size_t $(lib)_nops;
const sg_op_desc *$(lib)_find(const char *name, const char *overload);

/* The boxing adapters, one per C signature: a boxed call of an op -> its typed kernel. */
% for _, op in ipairs(C.adapter_ops()) do
sg_boxed $(lib)_$(C.boxed_name(op));
% end

% for _, op in ipairs(model.ops) do
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
    return sg_op_impl_typed($(cn)_op, key, (sg_fn)fn, $(lib)_$(c.boxed_name), out);
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
