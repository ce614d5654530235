%! output = "{lib}_typed_calls.c"
% local C = import "c"
% local T = model.type_families
% local L = lib:upper()
/* $(output): every op of the schema set called through its typed C wrapper from boxed
 * arguments (declared in $(lib)_typed_calls.h). Test support, built for the tests alone.
 *
 * Per op: the tags each argument may carry (its type family's, from the type table; None where
 * optional, one int for a list of fixed size), and a call that unboxes the arguments as the
 * op's boxing adapter does, calls the public typed wrapper (which dispatches on the unboxed
 * path) and boxes its results as the adapter boxes a kernel's. The ops are in model.sorted's
 * order (namespace, name, overload; byte order), for a binary search.
 * $(C.comment(banner)) */
#include "$(lib)_typed_calls.h"

#include "$(lib).h"

#include <string.h>

#define TAG(t) (1u << (t))
#define ALL_TAGS (TAG(SG_ANY__COUNT) - 1u)

typedef struct typed_op {
    const char *ns, *name, *overload;
    int32_t     nargs, nrets;
    const uint32_t *takes; /* nargs masks of the tags each argument may carry */
    sg_status (*call)(const sg_any *sg_args, sg_any *sg_rets); /* NULL: no typed wrapper */
} typed_op;

% -- the mask of the tags an argument may carry, as C text
% local function takes(a)
%   local tags = T[a.family].tags
%   if #tags == 0 then return "ALL_TAGS" end
%   local t = {}
%   for _, tag in ipairs(tags) do t[#t + 1] = "TAG(" .. tag .. ")" end
%   if a.optional then t[#t + 1] = "TAG(SG_ANY_NONE)" end
%   if a.size and (a.family == "int_list" or a.family == "opt_int_list") then t[#t + 1] = "TAG(SG_ANY_INT)" end
%   return table.concat(t, " | ")
% end
% for _, op in ipairs(model.sorted) do
%   local c, cn = C.info(op), op.cname
%   if c.typed then
%     local nargs, nrets = #op.args, #op.returns
/* ---- $(C.comment(op.schema)) */
%     if nargs > 0 then
static const uint32_t takes_$(cn)[] = {
%       for i, a in ipairs(op.args) do
    $(takes(a)), /* $(a.cname) */
%       end
};
%     end
static sg_status call_$(cn)(const sg_any *sg_args, sg_any *sg_rets) {
    (void)sg_args, (void)sg_rets;
%     local call = {}
%     for i, a in ipairs(op.args) do
%       local decl, expr = C.family(a).unbox("(&sg_args[" .. (i - 1) .. "])", "sg_room" .. (i - 1), a)
%       if decl then
    $(decl)
%       end
    $(C.decl(C.family(a).param, "a" .. (i - 1))) = $(expr);
%       call[#call + 1] = "a" .. (i - 1)
%     end
%     for i, r in ipairs(op.returns) do
    $(C.decl(C.ret_family(r).target, "r" .. (i - 1))) = $(C.ret_family(r).init);
%       call[#call + 1] = "&r" .. (i - 1)
%     end
    sg_status sg_st = $(cn)($(table.concat(call, ", ")));
    if (sg_st) return sg_st;
%     for i, r in ipairs(op.returns) do
    sg_rets[$(i - 1)] = $(C.ret_family(r).box("r" .. (i - 1)));
%     end
    return SG_OK;
}

%   end
% end
static const typed_op sg_typed_ops[] = {
% for _, op in ipairs(model.sorted) do
%   local cn = op.cname
%   if C.typed(op) then
    {$(cstr(op.namespace)), $(cstr(op.name)), $(cstr(op.overload)), $(#op.args), $(#op.returns), $(#op.args > 0 and "takes_" .. cn or "NULL"), call_$(cn)},
%   else
    {$(cstr(op.namespace)), $(cstr(op.name)), $(cstr(op.overload)), $(#op.args), $(#op.returns), NULL, NULL},
%   end
% end
    {NULL, NULL, NULL, 0, 0, NULL, NULL}, /* so that the table is never empty; not searched */
};
enum { NOPS = $(#model.sorted) };

/* The op of (ns[0..nsn), name, overload), or NULL: model.sorted's order, strcmp's on each. */
static const typed_op *find(const char *ns, size_t nsn, const char *name, const char *overload) {
    size_t lo = 0, hi = NOPS;
    while (lo < hi) {
        size_t          mid = lo + (hi - lo) / 2;
        const typed_op *o = &sg_typed_ops[mid];
        size_t          k = strlen(o->ns);
        int             c = memcmp(o->ns, ns, k < nsn ? k : nsn);
        if (!c) c = k < nsn ? -1 : k > nsn;
        if (!c) c = strcmp(o->name, name);
        if (!c) c = strcmp(o->overload, overload);
        if (!c) return o;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

$(lib)_typed_how $(lib)_typed_call(const char *name, const char *overload, const sg_any *args,
    int32_t nargs, sg_any *rets, int32_t nrets, sg_status *st) {
    *st = SG_OK;
    for (int32_t i = 0; rets && i < nrets; i++) rets[i] = sg_any_none();
    if (!name) return $(L)_TYPED_NO_OP;
    const char *colons = strstr(name, "::");
    const typed_op *o = colons ? find(name, (size_t)(colons - name), colons + 2, overload ? overload : "")
                               : find("aten", 4, name, overload ? overload : "");
    if (!o) return $(L)_TYPED_NO_OP;
    if (!o->call) return $(L)_TYPED_NO_WRAPPER;
    if (nargs != o->nargs || nrets < o->nrets || (nargs > 0 && !args) || (o->nrets > 0 && !rets))
        return $(L)_TYPED_COUNT;
    for (int32_t i = 0; i < nargs; i++)
        if ((uint32_t)args[i].tag >= SG_ANY__COUNT || !(o->takes[i] >> args[i].tag & 1))
            return $(L)_TYPED_TAG;
    *st = o->call(args, rets);
    return $(L)_TYPED_CALLED;
}

const char *$(lib)_typed_how_text($(lib)_typed_how how) {
    static const char *const text[$(L)_TYPED__COUNT] = {
        [$(L)_TYPED_CALLED] = "called",
        [$(L)_TYPED_NO_OP] = "no such op in the schema set",
        [$(L)_TYPED_NO_WRAPPER] = "no typed wrapper (varargs or varret)",
        [$(L)_TYPED_COUNT] = "not every argument given, or too few result slots",
        [$(L)_TYPED_TAG] = "an argument's tag is none its C parameter holds",
    };
    return how >= 0 && how < $(L)_TYPED__COUNT ? text[how] : "?";
}
