%! output = kernel_keys ~= nil and "{lib}_kernels.h"
% local C = import "c"
% -- only with --kernel-keys (kernel_keys and kernels are nil without it): the kernels the
% -- schemas name under the selected keys, each declared once with its op's kernel type
% local shards, seen = {}, {}
% for _, k in ipairs(kernels) do
%   if not seen[k.op.shard] then
%     seen[k.op.shard] = true
%     shards[#shards + 1] = k.op.shard
%   end
% end
% table.sort(shards)
/* $(output): the kernels the schemas of $(lib) name under `dispatch:` for the keys
 * --kernel-keys selects ($(C.comment(table.concat(kernel_keys, ", ")))).
 * Each is declared with its op's kernel type, so a definition of another C type does not
 * compile where this header is included, and $(lib)_init() registers it at its keys: a kernel
 * that is not defined is a link error that names it. $(lib).h includes this header.
 * $(C.comment(banner)) */
#ifndef SG_GEN_$(lib:upper())_KERNELS_H
#define SG_GEN_$(lib:upper())_KERNELS_H

% for _, k in ipairs(shards) do
#include "$(lib)_$(k).h"
% end

#ifdef __cplusplus
extern "C" {
#endif

% for _, k in ipairs(kernels) do
%   local at = {}
%   for _, reg in ipairs(k.registrations) do
%     local op = reg.op
%     at[#at + 1] = op.qualified .. (op.overload ~= "" and "." .. op.overload or "") .. " at " .. reg.key
%   end
/* $(C.comment(table.concat(at, "; "))) */
$(k.op.cname)_fn $(k.name);
% end

#ifdef __cplusplus
}
#endif
#endif
