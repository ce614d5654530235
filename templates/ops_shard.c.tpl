%! output = "{lib}_{shard}.c", per_shard = true
% local C = import "c"
/* $(output): typed wrappers and boxing adapters of $(#ops) ops (shard $(shard + 1) of $(nshards)).
 * $(C.comment(banner)) */
#include "$(lib).h"

/* ---- boxing adapters: boxed call -> typed kernel, one per C signature, each in the file of
 * its first op, whose kernel type it calls (the kernel is found through ctx: see sg_kernel) */
% for _, op in ipairs(ops) do
%   if C.adapter_home(op) then
%     local bn = lib .. "_" .. C.info(op).boxed_name
%     local nargs, nrets = #op.args, #op.returns
sg_status $(bn)(void *sg_ctx, const sg_op *sg_op_, sg_keyset sg_ks, const sg_any *sg_args,
                int32_t sg_nargs, sg_any *sg_rets, int32_t sg_nrets) {
    (void)sg_op_, (void)sg_nargs, (void)sg_nrets, (void)sg_args, (void)sg_rets;
%     for i, a in ipairs(op.args) do
%       local decl, expr = C.family(a).unbox("(&sg_args[" .. (i - 1) .. "])", "sg_room" .. (i - 1), a)
%       if decl then
    $(decl)
%       end
    $(C.decl(C.family(a).param, "a" .. (i - 1))) = $(expr);
%     end
%     for i, r in ipairs(op.returns) do
    $(C.decl(C.ret_family(r).target, "r" .. (i - 1))) = $(C.ret_family(r).init);
%     end
%     local call = {}
%     for i = 1, nargs do call[#call + 1] = "a" .. (i - 1) end
%     for i = 1, nrets do call[#call + 1] = "&r" .. (i - 1) end
    sg_status sg_st = (($(op.cname)_kernel) * (const sg_fn *)sg_ctx)(sg_ks$(#call > 0 and ", " .. table.concat(call, ", ") or ""));
    if (sg_st) return sg_st;
%     for i, r in ipairs(op.returns) do
    sg_rets[$(i - 1)] = $(C.ret_family(r).box("r" .. (i - 1)));
%     end
    return SG_OK;
}

%   end
% end
% for _, op in ipairs(ops) do
%   local cn = op.cname
/* ---- $(C.comment(op.schema)) */
sg_op *$(cn)_op;
%   local c = C.info(op)
%   if c.typed then
%     local params, args = c.params, c.call_args
%     local sep = params == "void" and "" or ", "
%     local argsep = args == "" and "" or ", "

sg_status $(cn)_redispatch(sg_keyset sg_ks$(sep)$(params)) {
    const sg_entry *sg_e = sg_dispatch_entry($(cn)_op, sg_ks);
    if (SG_LIKELY(sg_e->unboxed != NULL)) return (($(cn)_kernel)sg_e->unboxed)(sg_ks$(argsep)$(args));
    return sg_call_boxed_sig(sg_e, $(cn)_op, sg_ks, "$(c.signature)"$(argsep)$(args));
}

sg_status $(cn)($(params)) {
%     for i, a in ipairs(op.args) do
%       if a.write and (a.family == "tensor" or a.family == "opt_tensor") then
    if (SG_UNLIKELY($(a.cname) && !sg_tensor_writable($(a.cname))))
        return sg_op_check_writable($(cn)_op, $(i - 1), $(a.cname));
%       elseif a.write then
    for (int32_t sg_i = 0; sg_i < $(a.cname).len; sg_i++)
        if (SG_UNLIKELY($(a.cname).items[sg_i] && !sg_tensor_writable($(a.cname).items[sg_i])))
            return sg_op_check_writable($(cn)_op, $(i - 1), $(a.cname).items[sg_i]);
%       end
%     end
    return $(cn)_redispatch(sg_tls_apply($(c.keys))$(argsep)$(args));
}
%   end

% end
