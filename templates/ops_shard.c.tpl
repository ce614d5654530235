%! output = "{lib}_{shard}.c", per_shard = true
% local C = import "c"
% -- the other shards whose ops this one's composite kernels call: none, as an op's shard is
% -- that of the op it comes from (docs/templates.md), unless a chain of such links is longer
% -- than the generator follows
% local others, seen = {}, {}
% for _, op in ipairs(ops) do
%   local x = op.composite and (op.structured_out or op.autogen_from)
%   if x and x.shard ~= shard and not seen[x.shard] then
%     seen[x.shard] = true
%     others[#others + 1] = x.shard
%   end
% end
% table.sort(others)
% -- positional names by 1-based position (C.seq): the adapters' a0.., r0.., their boxed
% -- arguments and result slots; the generated kernels' locals sg_r0.. and sg_o[0]..
% local arg_name, ret_name = C.seq("a"), C.seq("r")
% local boxed_arg, room = C.seq("(&sg_args[", "])"), C.seq("sg_room")
% local ret_slot, ret_ref = C.seq("&sg_rets[", "].u.t"), C.seq("&r")
% local local_ret, local_ret_ref = C.seq("sg_r"), C.seq("&sg_r")
% local out_at, ret_at_ref = C.seq("sg_o[", "]"), C.seq("&sg_r[", "]")
/* $(output): the $(#ops) ops of shard $(shard) of $(lib): typed wrappers, boxing adapters, and the
 * kernels the generator writes (the functional and in-place variants of structured ops: a meta
 * function, then the out kernel; the variants `autogen:` asks for), which $(lib)_init registers
 * for CompositeExplicitAutograd, so a backend with a kernel of its own for the op still wins.
 * $(C.comment(banner)) */
#include "$(lib)_$(shard).h"
% for _, k in ipairs(others) do
#include "$(lib)_$(k).h"
% end

/* ---- adapters, one set per C signature this shard's ops have (each shard has its own), in
 * the order of their names; each is written from the signature alone (positional names, the
 * signature's own function types), so no op decides its text or its place:
 *   boxed_*  boxed call -> typed kernel (found through ctx: see sg_kernel); a Tensor result is
 *            written by the kernel into its result slot, which is tagged when the kernel succeeds
 *   over_*   typed call -> typed overrides (sg_override_set), then what stands behind them
 *            (the stock's typed kernel, else the op's redispatch below the key, which the set
 *            keeps); not inlined: in the typed wrappers it would cost the fast path a frame;
 *            the kernel's parameters first, so a typed call reaches it with them in place */
% local reps = C.shard_adapters(ops)
% -- the declarations that unbox op's arguments from sg_args into a0, a1, ...
% local function unbox_args(op)
%   for i, a in ipairs(op.args) do
%     local decl, expr = C.family(a).unbox(boxed_arg[i], room[i], a)
%     if decl then
    $(decl)
%     end
    $(C.decl(C.family(a).param, arg_name[i])) = $(expr);
%   end
% end
% -- the call of callee (a typed function's expression; lead, where given, its first argument)
% -- with a0.. and the result slots, then the results boxed: a Tensor result goes straight into
% -- its slot (zeroed by the caller: sg_boxed), which is tagged once the call succeeds; other
% -- results go through a local
% local function call_and_box(op, callee, lead)
%   local nargs, nrets = #op.args, #op.returns
%   local in_slot = {}
%   for i, r in ipairs(op.returns) do
%     in_slot[i] = r.family == "tensor"
%     if not in_slot[i] then
    $(C.decl(C.ret_family(r).target, ret_name[i])) = $(C.ret_family(r).init);
%     end
%   end
%   local call = {lead}
%   for i = 1, nargs do call[#call + 1] = arg_name[i] end
%   for i = 1, nrets do call[#call + 1] = in_slot[i] and ret_slot[i] or ret_ref[i] end
    sg_status sg_st = $(callee)($(table.concat(call, ", ")));
%   local any_slot = false
%   for i = 1, nrets do any_slot = any_slot or in_slot[i] end
%   if any_slot then
    if (SG_UNLIKELY(sg_st)) {
%     for i = 1, nrets do
%       if in_slot[i] then
        sg_rets[$(i - 1)].u.t = NULL; /* a failed call's slots stay None */
%       end
%     end
        return sg_st;
    }
%   else
    if (sg_st) return sg_st;
%   end
%   for i, r in ipairs(op.returns) do
%     if in_slot[i] then
    sg_rets[$(i - 1)].tag = SG_ANY_TENSOR;
%     else
    sg_rets[$(i - 1)] = $(C.ret_family(r).box(ret_name[i]));
%     end
%   end
    return SG_OK;
% end
% -- the boxed entry's name by boxed_name, for signatures whose every argument's family has a
% -- fast test
% local entry_of = {}
% for _, op in ipairs(reps) do
%   local fast, name = true, C.info(op).boxed_name
%   for _, a in ipairs(op.args) do fast = fast and C.family(a).fast ~= nil end
%   if fast then entry_of[name] = lib .. "_" .. name:gsub("^boxed_", "entry_") end
% end
% for _, op in ipairs(reps) do
%   do
%     local info = C.info(op)
%     local bn = lib .. "_" .. info.boxed_name
%     local sig = info.boxed_name:gsub("^boxed_", "")
%     local nargs, nrets = #op.args, #op.returns
%     -- the signature's parameters and arguments, by position: a0.. then r0..
%     local P, A = {}, {}
%     for i, a in ipairs(op.args) do P[i], A[i] = C.decl(C.family(a).param, arg_name[i]), arg_name[i] end
%     for i, r in ipairs(op.returns) do
%       P[nargs + i] = C.decl(C.pointer_to(C.ret_family(r).target), ret_name[i])
%       A[nargs + i] = ret_name[i]
%     end
%     local function list(t, n) return n > 0 and ", " .. table.concat(t, ", ", 1, n) or "" end
%     local params, args = list(P, nargs + nrets), list(A, nargs + nrets)
%     local in_params, in_args = list(P, nargs), list(A, nargs)
typedef sg_status sg_kfn_$(sig)(sg_keyset sg_ks$(params));
typedef bool sg_pfn_$(sig)(void *sg_ctx, sg_keyset sg_ks$(in_params));

static sg_status $(bn)(const sg_op *sg_op_, sg_keyset sg_ks, const sg_any *sg_args, sg_any *sg_rets,
                       int32_t sg_nrets, void *sg_ctx) {
    (void)sg_op_, (void)sg_nrets, (void)sg_args, (void)sg_rets;
%     unbox_args(op)
%     call_and_box(op, "((sg_kfn_" .. sig .. " *) * (const sg_fn *)sg_ctx)", "sg_ks")
}

%     if entry_of[info.boxed_name] then
typedef sg_status sg_wfn_$(sig)($(nargs + nrets > 0 and params:sub(3) or "void"));

/* the boxed entry (sg_boxed_entry): what needs no check beyond these tests goes to the typed
 * wrapper, the rest to the generic boxed call */
static sg_status $(entry_of[info.boxed_name])(const sg_op *sg_op_, const sg_any *sg_args, int32_t sg_nargs,
                       sg_any *sg_rets, int32_t sg_nrets, sg_fn sg_typed) {
%       local tests = {"sg_nargs != " .. nargs, "sg_nrets != " .. nrets}
%       if nargs > 0 then tests[#tests + 1] = "!sg_args" end
%       if nrets > 0 then tests[#tests + 1] = "!sg_rets" end
%       for i, a in ipairs(op.args) do tests[#tests + 1] = "!" .. C.family(a).fast(boxed_arg[i]) end
    if (SG_UNLIKELY($(table.concat(tests, " ||\n                    "))))
        return sg_op_call_boxed_generic(sg_op_, sg_args, sg_nargs, sg_rets, sg_nrets);
%       for i = 1, nrets do
    sg_rets[$(i - 1)] = sg_any_none();
%       end
%       unbox_args(op)
%       call_and_box(op, "((sg_wfn_" .. sig .. " *)sg_typed)", nil)
}

%     end
SG_NOINLINE static sg_status $(lib)_over_$(sig)(sg_keyset sg_ks$(params),
                       const sg_override_set *sg_s) {
    const sg_override_typed *sg_o = sg_override_items(sg_s); /* one at least (sg_override_set) */
    do
        if (((sg_pfn_$(sig) *)sg_o->pred)(sg_o->ctx, sg_ks$(in_args)))
            return ((sg_kfn_$(sig) *)sg_o->impl)(sg_ks$(args));
    while ((++sg_o)->pred);
    if (sg_o->impl) return ((sg_kfn_$(sig) *)sg_o->impl)(sg_ks$(args));
    sg_s = sg_o->ctx;
    if (sg_s->stock_falls)
        return ((sg_kfn_$(sig) *)sg_s->redispatch)(sg_keyset_below(sg_ks, (sg_key)sg_s->key)$(args));
    return sg_call_boxed_sig(&sg_s->stock, sg_s->op, sg_ks, "$(info.signature)"$(args));
}

%   end
% end
% if #reps > 0 then
/* the adapters by number: each op's _register and _override (in $(lib)_$(shard).h) name theirs */
static const sg_boxed_fn sg_adapters[] = {
%   for _, op in ipairs(reps) do
    $(lib)_$(C.info(op).boxed_name),
%   end
};

% end
sg_status $(lib)_boxed_register_$(shard)(sg_op *op, unsigned adapter, sg_key key, sg_fn fn,
    sg_handle **out) {
% if #reps > 0 then
    if (adapter >= sizeof sg_adapters / sizeof sg_adapters[0])
        return sg_error(SG_EINVAL, "$(lib)_boxed_register_$(shard): no adapter %u", adapter);
    return sg_op_impl_typed(op, key, fn, sg_adapters[adapter], out);
% else
    (void)op, (void)key, (void)fn, (void)out;
    return sg_error(SG_EINVAL, "$(lib)_boxed_register_$(shard): no adapter %u", adapter);
% end
}

sg_status $(lib)_boxed_override_$(shard)(sg_op *op, unsigned adapter, sg_key key,
    int32_t priority, sg_fn pred, sg_fn impl, void *ctx, sg_fn redispatch, sg_handle **out) {
% if #reps > 0 then
    if (adapter >= sizeof sg_adapters / sizeof sg_adapters[0])
        return sg_error(SG_EINVAL, "$(lib)_boxed_override_$(shard): no adapter %u", adapter);
    sg_override_typed sg_o = {pred, impl, ctx};
    return sg_op_override_typed(op, key, priority, sg_o, sg_adapters[adapter], redispatch, out);
% else
    (void)op, (void)key, (void)priority, (void)pred, (void)impl, (void)ctx, (void)redispatch, (void)out;
    return sg_error(SG_EINVAL, "$(lib)_boxed_override_$(shard): no adapter %u", adapter);
% end
}

% for _, op in ipairs(ops) do
%   local cn = op.cname
/* ---- $(C.comment(op.schema)) */
sg_op *$(cn)_op = &sg_op_uninit;
%   local c = C.info(op)
%   if c.typed then
%     local params, args = c.params, c.call_args
%     local sep = params == "void" and "" or ", "
%     local argsep = args == "" and "" or ", "

sg_status $(cn)_redispatch(sg_keyset sg_ks$(sep)$(params)) {
    const sg_entry *sg_e = sg_dispatch_entry($(cn)_op, sg_ks);
    if (SG_LIKELY(sg_e->unboxed != NULL)) return (($(cn)_kernel)sg_e->unboxed)(sg_ks$(argsep)$(args));
    if (sg_e->kind == SG_ENTRY_OVERRIDE_TYPED)
        return $(lib)_over_$(c.boxed_name:gsub("^boxed_", ""))(sg_ks$(argsep)$(args), sg_e->ctx);
    return sg_call_boxed_sig(sg_e, $(cn)_op, sg_ks, "$(c.signature)"$(argsep)$(args));
}

sg_status $(cn)($(params)) {
%     local ts, ti, lists = {}, {}, {}
%     for i, a in ipairs(op.args) do
%       if a.family == "tensor" then
    if (SG_UNLIKELY(!$(a.cname))) return sg_op_null_arg($(cn)_op, $(i - 1));
%       elseif a.family == "tensor_list" or a.family == "opt_tensor_list" then
%         -- what a boxed call refuses in a list: refused before the keys read its items
%         local opt = a.family == "opt_tensor_list" and "true" or "false"
    if (SG_UNLIKELY(!sg_tensor_list_ok($(a.cname), $(opt))))
        return sg_op_bad_list($(cn)_op, $(i - 1), $(a.cname), $(opt));
%         lists[#lists + 1] = a.cname
%       end
%       if a.family == "tensor" or a.family == "opt_tensor" then
%         ts[#ts + 1], ti[#ti + 1] = a.cname, i - 1
%       end
%     end
%     -- against the first Tensor (not optional) where there is one: a plain test per tensor,
%     -- quicker to compile than the general loop
%     local ref
%     for _, a in ipairs(op.args) do if not ref and a.family == "tensor" then ref = a.cname end end
%     if #lists > 0 then
%       -- tensor lists: every tensor against the first met; where one differs, the boxed
%       -- call's check over the tensor arguments boxed (the others None: it reads none)
%       local diff, boxed = {}, {}
%       for _, t in ipairs(ts) do diff[#diff + 1] = "sg_tensor_device_differs(&sg_first, " .. t .. ")" end
%       for _, l in ipairs(lists) do diff[#diff + 1] = "sg_tensor_list_device_differs(&sg_first, " .. l .. ".items, " .. l .. ".len)" end
%       for _, a in ipairs(op.args) do
%         local f = a.family
%         local tensorish = f == "tensor" or f == "opt_tensor" or f == "tensor_list" or f == "opt_tensor_list"
%         boxed[#boxed + 1] = tensorish and C.family(a).box(a.cname) or "sg_any_none()"
%       end
    const sg_tensor *sg_first = NULL;
    if (SG_UNLIKELY($(table.concat(diff, " || ")))) {
        sg_status sg_dst = sg_check_same_device($(cn)_op, (const sg_any[]){$(table.concat(boxed, ", "))}, $(#op.args));
        if (sg_dst) return sg_dst; /* else a CPU scalar beside another device, or an op exempt */
    }
%     elseif #ts > 1 and ref then
%       local diff = {}
%       for _, t in ipairs(ts) do if t ~= ref then diff[#diff + 1] = "sg_tensor_other_device(" .. ref .. ", " .. t .. ")" end end
    if (SG_UNLIKELY($(table.concat(diff, " || ")))) {
        sg_status sg_dst = sg_check_same_device_slow($(cn)_op, (const sg_tensor *const[]){$(table.concat(ts, ", "))},
                                                     (const int32_t[]){$(table.concat(ti, ", "))}, $(#ts));
        if (sg_dst) return sg_dst; /* else a CPU scalar beside another device, or an op exempt */
    }
%     elseif #ts > 1 then
    sg_status sg_dst = sg_check_same_device_typed($(cn)_op, (const sg_tensor *const[]){$(table.concat(ts, ", "))},
                                                  (const int32_t[]){$(table.concat(ti, ", "))}, $(#ts));
    if (SG_UNLIKELY(sg_dst)) return sg_dst;
%     end
%     for _, a in ipairs(op.written) do
%       if a.family == "tensor" or a.family == "opt_tensor" then
    if (SG_UNLIKELY($(a.cname) && !sg_tensor_writable($(a.cname))))
        return sg_op_check_writable($(cn)_op, $(a.index), $(a.cname));
%       else
    for (int32_t sg_i = 0; sg_i < $(a.cname).len; sg_i++)
        if (SG_UNLIKELY($(a.cname).items[sg_i] && !sg_tensor_writable($(a.cname).items[sg_i])))
            return sg_op_check_writable($(cn)_op, $(a.index), $(a.cname).items[sg_i]);
%       end
%     end
    return $(cn)_redispatch(sg_tls_apply($(c.keys))$(argsep)$(args));
}
%   end

% end
% for _, op in ipairs(ops) do
%   if op.structured_is_out and C.typed(op) then
/* the meta function of structured $(C.comment(op.schema)) */
$(op.cname)_meta_fn $(op.cname)_meta;
void $(op.cname)_set_meta($(op.cname)_meta_fn fn) { __atomic_store_n(&$(op.cname)_meta, fn, __ATOMIC_RELEASE); }

%   end
%   local kind = op.composite
%   if kind then
%     local cn, params = op.cname, C.params(op)
%     local rets = C.ret_names(op)
/* $(C.comment(op.schema))$(kind == "structured" and "\n * structured: " .. C.comment(op.structured_out.schema) or "\n * autogen (" .. kind .. ") from " .. C.comment(op.autogen_from.schema)) */
sg_status $(cn)_composite(sg_keyset sg_ks, $(params)) {
%     for i, r in ipairs(op.returns) do
%       if r.family == "tensor" or r.family == "opt_tensor" then
    *$(rets[i]) = NULL; /* on failure a caller gets NULL, never a stale pointer */
%       end
%     end
%     if kind == "structured" then
%       local x = op.structured_out
%       local subst, results = {}, {}
%       local outs, margs = x.outs, {}
%       for i, a in ipairs(x.args) do if not a.is_out then margs[#margs + 1] = C.arg_value(op, i, a) end end
%       margs[#margs + 1] = "sg_m"
    $(x.cname)_meta_fn sg_mf = __atomic_load_n(&$(x.cname)_meta, __ATOMIC_ACQUIRE);
    if (!sg_mf)
        return sg_error(SG_EUNSUPPORTED, $(cstr(op.qualified .. (op.overload ~= "" and "." .. op.overload or "") .. " runs as structured " .. x.qualified .. "." .. x.overload .. ", whose meta function is not set (" .. x.cname .. "_set_meta)")));
    sg_meta sg_m[$(#outs)];
%       if op.kind ~= "inplace" then
    for (int sg_i = 0; sg_i < $(#outs); sg_i++) sg_m[sg_i].strided = false; /* read by sg_meta_empty */
%       end
    sg_status sg_st = sg_mf($(table.concat(margs, ", ")));
    if (sg_st) return sg_st;
%       if op.kind == "inplace" then
%         local self = op.args[1].cname
    if ((sg_st = sg_meta_check(&sg_m[0], $(self), $(cstr(op.qualified))))) return sg_st;
%         subst[outs[1].name] = self
%         results[1] = rets[1]
    sg_st = $(x.cname)_redispatch(sg_ks, $(C.call_of(x, subst, results, op)));
    return SG_UNLIKELY(sg_st) ? sg_op_error_via(sg_st, $(cn)_op, $(x.cname)_op) : SG_OK;
%       else
    sg_tensor *sg_o[$(#outs)] = {NULL};
%         for i, a in ipairs(outs) do
%           subst[a.name] = out_at[i]
%         end
%         local xr = {}
%         for i = 1, #x.returns do xr[i] = ret_at_ref[i] end
    sg_tensor *sg_r[$(math.max(#x.returns, 1))] = {NULL};
    for (int sg_i = 0; sg_i < $(#outs) && !sg_st; sg_i++) sg_st = sg_meta_empty(&sg_m[sg_i], &sg_o[sg_i]);
    if (!sg_st) sg_st = $(x.cname)_redispatch(sg_ks, $(C.call_of(x, subst, xr, op)));
    if (SG_UNLIKELY(sg_st)) sg_st = sg_op_error_via(sg_st, $(cn)_op, $(x.cname)_op);
    for (int sg_i = 0; sg_i < $(#x.returns); sg_i++) sg_tensor_release(sg_r[sg_i]);
%         for i, name in ipairs(rets) do
    *$(name) = sg_st ? NULL : sg_o[$(i - 1)];
%         end
    if (sg_st)
        for (int sg_i = 0; sg_i < $(#outs); sg_i++) sg_tensor_release(sg_o[sg_i]);
    return sg_st;
%       end
%     elseif kind == "out" then
%       local b = op.autogen_from
%       local outs = op.outs
%       local br = {}
%       for i, r in ipairs(b.returns) do br[i] = local_ret_ref[i] end
    (void)sg_ks;
%       for i, r in ipairs(b.returns) do
    $(C.decl(C.ret_family(r).target, local_ret[i])) = $(C.ret_family(r).init);
%       end
    sg_status sg_st = $(b.cname)($(C.call_of(b, nil, br, op)));
    if (SG_UNLIKELY(sg_st)) sg_st = sg_op_error_via(sg_st, $(cn)_op, $(b.cname)_op);
%       for i, a in ipairs(outs) do
%         local r = b.returns[i]
%         if r and r.family == "tensor_list" then
    if (!sg_st) sg_st = sg_tensor_list_copy_out_($(a.cname), sg_r$(i - 1));
%         elseif r then
    if (!sg_st) sg_st = sg_tensor_copy_out_($(a.cname), sg_r$(i - 1));
%         end
%       end
%       for i, r in ipairs(b.returns) do
%         if r.family == "tensor_list" then
    sg_tensor_list_release(&sg_r$(i - 1));
%         elseif r.family == "tensor" or r.family == "opt_tensor" then
    sg_tensor_release(sg_r$(i - 1));
%         end
%       end
%       for i, name in ipairs(rets) do
    if (!sg_st) *$(name) = sg_tensor_retain($(outs[i].cname));
%       end
    return sg_st;
%     elseif kind == "out_inplace" then
%       local b = op.autogen_from
%       local self, out = op.args[1], op.outs[1]
%       local br = {}
%       for i = 1, #b.returns do br[i] = local_ret_ref[i] end
    (void)sg_ks;
%       if self.family == "tensor_list" then
    sg_status sg_st = sg_tensor_list_copy_out_($(out.cname), $(self.cname));
%       else
    sg_status sg_st = sg_tensor_copy_out_($(out.cname), $(self.cname));
%       end
%       for i, r in ipairs(b.returns) do
    $(C.decl(C.ret_family(r).target, local_ret[i])) = $(C.ret_family(r).init);
%       end
    if (!sg_st) sg_st = $(b.cname)($(C.call_of(b, {[b.args[1].name] = out.cname}, br, op)));
    if (SG_UNLIKELY(sg_st)) sg_st = sg_op_error_via(sg_st, $(cn)_op, $(b.cname)_op);
%       for i, r in ipairs(b.returns) do
%         if r.family == "tensor_list" then
    sg_tensor_list_release(&sg_r$(i - 1));
%         else
    sg_tensor_release(sg_r$(i - 1));
%         end
%       end
%       for i, name in ipairs(rets) do
    if (!sg_st) *$(name) = sg_tensor_retain($(out.cname));
%       end
    return sg_st;
%     elseif kind == "functional" then
%       -- the mutable op b on clones of what it writes; its results: its returns (one that is a
%       -- written argument, r.arg, is that argument's clone), then the clones it does not return
%       local b = op.autogen_from
%       local subst, returned = {}, {}
    (void)sg_ks;
    sg_status sg_st = SG_OK;
%       for _, a in ipairs(b.written) do
%         local c = "sg_c" .. a.index
%         if a.family == "tensor_list" then
    sg_tensor_list $(c) = {NULL, 0};
    if (!sg_st) sg_st = sg_tensor_list_clone($(C.arg_value(op, a.index + 1, a)), &$(c));
%         else
    sg_tensor *$(c) = NULL;
    if (!sg_st) sg_st = sg_tensor_clone($(C.arg_value(op, a.index + 1, a)), &$(c));
%         end
%         subst[a.name] = c
%       end
%       local br = {}
%       for i, r in ipairs(b.returns) do
    $(C.decl(C.ret_family(r).target, local_ret[i])) = $(C.ret_family(r).init);
%         br[i] = local_ret_ref[i]
%       end
    if (!sg_st) sg_st = $(b.cname)($(C.call_of(b, subst, br, op)));
    if (SG_UNLIKELY(sg_st)) sg_st = sg_op_error_via(sg_st, $(cn)_op, $(b.cname)_op);
%       local function take(j, a) -- result j becomes the clone of written argument a
%         local c = "sg_c" .. a.index
    if (!sg_st) { *$(rets[j]) = $(c); $(c) = $(a.family == "tensor_list" and "(sg_tensor_list){NULL, 0}" or "NULL"); }
%         returned[a.index] = true
%       end
%       local j = 0
%       for i, r in ipairs(b.returns) do
%         j = j + 1
%         if r.arg then
%           if r.family == "tensor_list" then
    sg_tensor_list_release(&sg_r$(i - 1));
%           else
    sg_tensor_release(sg_r$(i - 1));
%           end
%           take(j, b.args[r.arg + 1])
%         else
    if (!sg_st) *$(rets[j]) = sg_r$(i - 1);
%         end
%       end
%       for _, a in ipairs(b.written) do
%         if not returned[a.index] and rets[j + 1] then
%           j = j + 1
%           take(j, a)
%         end
%       end
%       for _, a in ipairs(b.written) do
%         if a.family == "tensor_list" then
    sg_tensor_list_release(&sg_c$(a.index));
%         else
    sg_tensor_release(sg_c$(a.index));
%         end
%       end
    return sg_st;
%     end
}

%   end
% end

/* The generator's kernels of this shard, each with its op and the boxing adapter of its C
 * type. (A table, unlike a call per kernel, compiles in no time.) */
% local composites = {}
% for _, op in ipairs(ops) do
%   if op.composite then composites[#composites + 1] = op end
% end
% if #composites > 0 then
static const struct {
    sg_op     **op;
    sg_fn       fn;
    sg_boxed_fn adapter;
} sg_composites[] = {
%   for _, op in ipairs(composites) do
    {&$(op.cname)_op, (sg_fn)$(op.cname)_composite, $(lib)_$(C.boxed_name(op))},
%   end
};
% end

sg_status $(lib)_boxed_composites_$(shard)(void) {
% if #composites > 0 then
    for (size_t sg_i = 0; sg_i < sizeof sg_composites / sizeof sg_composites[0]; sg_i++) {
        sg_status sg_st = sg_op_impl_typed(*sg_composites[sg_i].op, SG_KEY_COMPOSITE_EXPLICIT_AUTOGRAD,
                                           sg_composites[sg_i].fn, sg_composites[sg_i].adapter, NULL);
        if (sg_st) return sg_st;
    }
% end
    return SG_OK;
}

/* The boxed entries of this shard's ops (sg_boxed_entry), each with the typed wrapper it calls:
 * the ops whose signature has one. */
% local entries = {}
% for _, op in ipairs(ops) do
%   if C.info(op).typed and entry_of[C.info(op).boxed_name] then entries[#entries + 1] = op end
% end
% if #entries > 0 then
static const struct {
    sg_op         **op;
    sg_boxed_entry *entry;
    sg_fn           typed;
} sg_entries[] = {
%   for _, op in ipairs(entries) do
    {&$(op.cname)_op, $(entry_of[C.info(op).boxed_name]), (sg_fn)$(op.cname)},
%   end
};
% end

sg_status $(lib)_boxed_entries_$(shard)(void) {
% if #entries > 0 then
    for (size_t sg_i = 0; sg_i < sizeof sg_entries / sizeof sg_entries[0]; sg_i++) {
        sg_status sg_st = sg_op_set_boxed_entry(*sg_entries[sg_i].op, sg_entries[sg_i].entry,
                                                sg_entries[sg_i].typed);
        if (sg_st) return sg_st;
    }
% end
    return SG_OK;
}
