%! output = "{lib}_table.c"
% local C = import "c"
% -- the table is sorted by (qualified name, overload), byte order, for sg_op_desc_find
% local sorted = model.sorted
% local q = cstr
% local function b(v) return v and "true" or "false" end
% -- one argument's descriptor, made once per argument table (ops share identical arguments)
% local descs = {}
% local function desc(a)
%   local d = descs[a]
%   if not d then
%     d = "{" .. q(a.name) .. ", " .. q(a.type) .. ", " .. q(a.default) .. ", " ..
%         q(a.alias and a.alias.text) .. ", " .. b(a.kwarg_only) .. ", " .. b(a.write) .. "}"
%     descs[a] = d
%   end
%   return d
% end
/* $(output): the op table of $(lib) ($(#model.ops) ops, sorted by name and overload) and $(lib)_init.
 * $(C.comment(banner)) */
#include "$(lib).h"

% -- one descriptor array per distinct list, named after what it holds (a digest of its
% -- descriptors) and written in the order of those names, so that no op's place decides
% -- an array's name or place; lists of the same descriptors share one array
% local arrays, bodies, order = {}, {}, {}
% for _, op in ipairs(sorted) do
%   for part = 1, 2 do
%     local list = part == 1 and op.args or op.returns
%     if #list > 0 and not arrays[list] then
%       local d = {}
%       for i = 1, #list do d[i] = desc(list[i]) end
%       local body = table.concat(d, ",\n    ")
%       local name = "sg_argdesc_" .. digest(body) -- static: sg_ keeps it from every op's names
%       if bodies[name] == nil then
%         bodies[name] = body
%         order[#order + 1] = name
%       elseif bodies[name] ~= body then
%         error("two argument lists have one digest, " .. name .. ": a collision of 64 bits")
%       end
%       arrays[list] = name
%     end
%   end
% end
% table.sort(order)
% for _, name in ipairs(order) do
static const sg_arg_desc $(name)[] = {
    $(bodies[name]),
};
% end
% for _, op in ipairs(sorted) do
%   if #op.tags > 0 then
%     local tags = {}
%     for i, g in ipairs(op.tags) do tags[i] = q(g) end
static const char *const $(op.cname)_tags[] = {$(table.concat(tags, ", "))};
%   end
% end

const sg_op_desc $(lib)_ops[] = {
% for _, op in ipairs(sorted) do
%   local cn = op.cname
    {$(q(op.qualified)), $(q(op.overload)), $(q(op.schema)), $(q(cn)),
     $(arrays[op.args] or "NULL"), $(arrays[op.returns] or "NULL"), $(#op.args), $(#op.returns),
     $(#op.tags > 0 and cn .. "_tags" or "NULL"), $(#op.tags), &$(cn)_op},
% end
};
const size_t $(lib)_nops = sizeof $(lib)_ops / sizeof $(lib)_ops[0];

const sg_op_desc *$(lib)_find(const char *name, const char *overload) {
    return sg_op_desc_find($(lib)_ops, $(lib)_nops, name, overload);
}

% if kernels then
/* The kernels $(lib)_kernels.h declares, each at the keys the schemas name it for: what
 * --kernel-keys selects. Its locals start with sg_, which no kernel's name may. */
static sg_status $(lib)_boxed_kernels(void) {
    sg_status sg_st = SG_OK;
%   for _, k in ipairs(kernels) do
%     for _, reg in ipairs(k.registrations) do
    if ((sg_st = $(reg.op.cname)_register($(reg.constant), $(k.name), NULL))) return sg_st;
%     end
%   end
    return sg_st;
}

% end
sg_status $(lib)_init(void) {
    static uint64_t registered; /* the runtime epoch the composites were registered in */
    sg_status st = sg_op_desc_define_all($(lib)_ops, $(lib)_nops);
    uint64_t  now = sg_runtime_epoch();
    if (st || __atomic_exchange_n(&registered, now, __ATOMIC_ACQ_REL) == now) return st;
    /* each shard registers its own composite kernels and gives its ops their boxed entries */
% for k = 0, nshards - 1 do
    if ((st = $(lib)_boxed_composites_$(k)()) || (st = $(lib)_boxed_entries_$(k)())) return st;
% end
% if kernels then
    return $(lib)_boxed_kernels();
% else
    return SG_OK;
% end
}
