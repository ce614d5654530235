%! output = "{lib}.h"
% local C = import "c"
/* $(lib).h: the typed C API of the library $(lib): what the library declares itself, and every
 * shard's header ($(lib)_0.h, ...), each declaring the ops of its shard.
 * $(C.comment(banner))
 *
 * Per op ns::name.overload (C name ns_name_overload):
 *   ns_name_overload(...)             the typed call: dispatches on its tensors' keys
 *   ns_name_overload_redispatch(ks, ...)  the same, from a kernel, with a key set it narrowed
 *   ns_name_overload_kernel           the C type a kernel for it must have
 *   ns_name_overload_register(key, fn, &handle)  registers a kernel of that type (with the
 *                                     boxing adapter of its C type)
 *   ns_name_overload_pred_fn          the C type of a typed override's predicate:
 *                                     bool pred(void *ctx, sg_keyset ks, <the arguments>)
 *   ns_name_overload_override(key, priority, pred, impl, ctx, &handle)  registers a typed
 *                                     conditional override (impl: a kernel of the op's type);
 *                                     typed calls consult it without boxing, boxed calls through
 *                                     the adapters of its C type
 * The typed call refuses a NULL Tensor argument, a Tensor[] with a NULL item and a malformed
 * tensor list (SG_EINVAL), and tensors on different devices, lists' items included (aten's
 * same-device rule); before $(lib)_init() (and after sg_runtime_shutdown) every op
 * handle is sg_op_uninit, and calls fail with SG_ESTATE.
 * A structured out op also has ns_name_overload_set_meta(fn): its functional and in-place
 * variants then work wherever the out op has a kernel. Variants that `autogen:` asks for, and
 * those structured variants, have kernels written by the generator (ns_name_overload_composite),
 * registered by $(lib)_init for CompositeExplicitAutograd.
 * Arguments map to C types as docs/types.md says; results come back through the trailing
 * pointers (new references for tensors). Call $(lib)_init() once before anything else.
 * A file that uses only some ops may include only their shards' headers (an op's shard does
 * not change when other ops are added or edited). */
#ifndef $(lib:upper())_H
#define $(lib:upper())_H

#include "sg_runtime.h"
% for k = 0, nshards - 1 do
#include "$(lib)_$(k).h"
% end
% if kernel_keys then
#include "$(lib)_kernels.h"
% end

#ifdef __cplusplus
extern "C" {
#endif

% if kernel_keys then
/* Defines every op with the runtime and registers the generated composite kernels, then the
 * kernels $(lib)_kernels.h declares (those the schemas name for the keys --kernel-keys
 * selects), each at its keys. */
% else
/* Defines every op with the runtime and registers the generated composite kernels. */
% end
sg_status $(lib)_init(void);

/* The op table, sorted by name and overload, and a lookup in it (NULL where absent). */
extern const sg_op_desc $(lib)_ops[];
extern const size_t $(lib)_nops;
const sg_op_desc *$(lib)_find(const char *name, const char *overload);

#ifdef __cplusplus
}
#endif
#endif
