-- lib/c.lua: the C code of the generated API's type mapping, and the pieces of C the
-- templates assemble per op: parameter lists, boxing, unboxing.
--
-- Every schema type has a family (set by the tool on each argument and return: arg.family).
-- The facts of a family (C parameter and result types, signature letters, boxed tags) are the
-- tool's table, model.type_families (gen/schema/sg_type_table.h, docs/types.md); this file
-- adds the code: how a value is boxed into an sg_any, how it is unboxed from one (declarations
-- that need room, then an expression), and for tensors how its dispatch keys are read.

local C = {}
local T = model.type_families

-- family -> { param = C type (the table's), box(x) = expression, unbox(a, room) = decl, expr,
-- keys(x) }. `a` is an expression of type const sg_any *; `room` a name for locals.
local F = {}

F.tensor = {
  box = function(x) return "sg_any_tensor(" .. x .. ")" end,
  unbox = function(a) return nil, a .. "->u.t" end,
  keys = function(x) return x .. "->keys" end,
}
F.opt_tensor = {
  box = function(x) return "sg_box_opt_tensor(" .. x .. ")" end,
  unbox = function(a) return nil, "(" .. a .. "->tag == " .. T.opt_tensor.tags[1] .. " ? " .. a .. "->u.t : NULL)" end,
  keys = function(x) return "sg_tensor_keys_opt(" .. x .. ")" end,
}
F.tensor_list = {
  box = function(x) return "sg_box_tensor_list(" .. x .. ", false)" end,
  unbox = function(a) return nil, "sg_unbox_tensor_list(" .. a .. ")" end,
  keys = function(x) return "sg_tensor_list_keys(" .. x .. ")" end,
}
F.opt_tensor_list = {
  box = function(x) return "sg_box_tensor_list(" .. x .. ", true)" end,
  unbox = function(a) return nil, "sg_unbox_tensor_list(" .. a .. ")" end,
  keys = function(x) return "sg_tensor_list_keys(" .. x .. ")" end,
}

-- plain values: type, how to box one value, the union member to read
-- Rationale: enums are stored as int64_t in the payload and need a cast; a struct must not
-- have one (a cast to a struct type is not C).
local function cast(ctype)
  if ctype == T.device.param then return "" end
  return "(" .. ctype .. ")"
end
-- value(fam, ...) and optional(fam, ...) take the C type and tag of the plain family fam.
local function value(fam, box_one, member)
  local ctype = T[fam].param
  return {
    box = box_one,
    unbox = function(a) return nil, cast(ctype) .. a .. "->u." .. member end,
  }
end
local function optional(fam, box_one, member)
  local ctype, tag = T[fam].param, T[fam].tags[1]
  return {
    box = function(x) return "(" .. x .. " ? " .. box_one("*" .. x) .. " : sg_any_none())" end,
    unbox = function(a, room)
      return ctype .. " " .. room .. " = " .. cast(ctype) .. a .. "->u." .. member .. ";",
             "(" .. a .. "->tag == " .. tag .. " ? &" .. room .. " : NULL)"
    end,
  }
end
local function boxer(fn) return function(x) return fn .. "(" .. x .. ")" end end
local function tagged(fam)
  local tag = T[fam].tags[1]
  return function(x) return "sg_box_tag_i(" .. tag .. ", " .. x .. ")" end
end

F.int = value("int", boxer("sg_any_int"), "i")
F.opt_int = optional("int", boxer("sg_any_int"), "i")
F.float = value("float", boxer("sg_any_float"), "f")
F.opt_float = optional("float", boxer("sg_any_float"), "f")
F.bool = value("bool", boxer("sg_any_bool"), "b")
F.opt_bool = optional("bool", boxer("sg_any_bool"), "b")
F.dtype = value("dtype", tagged("dtype"), "i")
F.opt_dtype = optional("dtype", tagged("dtype"), "i")
F.layout = value("layout", tagged("layout"), "i")
F.opt_layout = optional("layout", tagged("layout"), "i")
F.memory_format = value("memory_format", tagged("memory_format"), "i")
F.opt_memory_format = optional("memory_format", tagged("memory_format"), "i")
F.device = value("device", boxer("sg_any_device"), "dev")
F.opt_device = optional("device", boxer("sg_any_device"), "dev")
F.complex = {
  box = function(x) return "sg_box_complex(&" .. x .. ")" end,
  unbox = function(a) return nil, "*" .. a .. "->u.c" end,
}
F.opt_complex = {
  box = function(x) return "sg_box_complex(" .. x .. ")" end,
  unbox = function(a) return nil, "(" .. a .. "->tag == " .. T.opt_complex.tags[1] .. " ? " .. a .. "->u.c : NULL)" end,
}
F.str = {
  box = function(x) return "sg_box_str(" .. x .. ")" end,
  unbox = function(a) return nil, "sg_unbox_str(" .. a .. ")" end,
}
F.opt_str = { box = F.str.box, unbox = F.str.unbox }
F.scalar = {
  box = function(x) return "sg_box_scalar(&" .. x .. ")" end,
  unbox = function(a) return nil, "sg_unbox_scalar(" .. a .. ")" end,
}
F.opt_scalar = {
  box = function(x) return "sg_box_scalar(" .. x .. ")" end,
  unbox = function(a, room)
    return C.decl(T.scalar.param, room) .. " = sg_unbox_scalar(" .. a .. ");",
           "(" .. a .. "->tag == SG_ANY_NONE ? NULL : &" .. room .. ")"
  end,
}
F.generator = {
  box = function(x) return "sg_box_opaque(" .. T.generator.tags[1] .. ", " .. x .. ")" end,
  unbox = function(a) return nil, "(" .. T.generator.param .. ")sg_unbox_opaque(" .. a .. ")" end,
}
F.opaque = {
  box = function(x) return "sg_box_opaque(" .. T.opaque.tags[1] .. ", " .. x .. ")" end,
  unbox = function(a) return nil, "sg_unbox_opaque(" .. a .. ")" end,
}
F.any = {
  box = function(x) return "(" .. x .. " ? *" .. x .. " : sg_any_none())" end,
  unbox = function(a) return nil, a end,
}

-- fast(a): the test a generated boxed entry (sg_boxed_entry) makes of argument a, an
-- expression of type const sg_any *, in place of the boxed call's checks: a tensor that is
-- there, or a tag of the family whose value needs no check (sg_any_plain). Ops with an
-- argument of a family without one take the generic boxed call.
F.tensor.fast = function(a) return "(" .. a .. "->tag == SG_ANY_TENSOR && " .. a .. "->u.t)" end
F.opt_tensor.fast = function(a)
  return "(" .. a .. "->tag == SG_ANY_TENSOR ? " .. a .. "->u.t != NULL : " .. a .. "->tag == SG_ANY_NONE)"
end
local function plain(fam, optional_)
  local m = {}
  for i, t in ipairs(T[fam].tags) do m[i] = "SG_ANY_TAG_BIT(" .. t .. ")" end
  if optional_ then m[#m + 1] = "SG_ANY_TAG_BIT(SG_ANY_NONE)" end
  local mask = table.concat(m, " | ")
  return function(a) return "sg_any_plain(" .. a .. ", " .. mask .. ")" end
end
F.int.fast, F.opt_int.fast = plain("int"), plain("opt_int", true)
F.float.fast, F.opt_float.fast = plain("float"), plain("opt_float", true)
F.scalar.fast, F.opt_scalar.fast = plain("scalar"), plain("opt_scalar", true)

-- lists by value, and their optional forms as pointers
local function list(box_fn, unbox_fn)
  return {
    box = function(x) return box_fn(x) end,
    unbox = unbox_fn,
  }
end
-- the optional form of the list family fam
local function opt_list(fam)
  local l, ctype = F[fam], T[fam].param
  return {
    box = function(x) return "(" .. x .. " ? " .. l.box("(*" .. x .. ")") .. " : sg_any_none())" end,
    unbox = function(a, room, arg)
      local decl, expr = l.unbox(a, room .. "_v", arg)
      return (decl and decl .. " " or "") .. ctype .. " " .. room .. " = " .. expr .. ";",
             "(" .. a .. "->tag == SG_ANY_NONE ? NULL : &" .. room .. ")"
    end,
  }
end

F.int_list = list(
  function(x) return "sg_any_int_list(" .. x .. ".items, " .. x .. ".len)" end,
  function(a, room, arg)
    local n = arg.size or 0
    return C.decl(T.int.param, room) .. "[" .. math.max(n, 1) .. "];",
           "sg_unbox_int_list(" .. a .. ", " .. room .. ", " .. n .. ")"
  end)
F.float_list = list(
  function(x) return "sg_box_float_list(" .. x .. ")" end,
  function(a) return nil, "sg_unbox_float_list(" .. a .. ")" end)
F.bool_list = list(
  function(x) return "sg_box_bool_list(" .. x .. ")" end,
  function(a) return nil, "sg_unbox_bool_list(" .. a .. ")" end)
-- Scalar[] and str[] box item by item: they need room as long as the list
F.scalar_list = list(
  function(x) return "sg_box_scalar_list(" .. x .. ", sg_room_" .. x:gsub("%W", "") .. ")" end,
  function(a, room)
    return C.decl(T.scalar.param, room) .. "[sg_unbox_list_len(" .. a .. ") + 1];",
           "sg_unbox_scalar_list(" .. a .. ", " .. room .. ")"
  end)
F.str_list = list(
  function(x) return "sg_box_str_list(" .. x .. ", sg_room_" .. x:gsub("%W", "") .. ")" end,
  function(a, room)
    return C.decl(T.str.param, room) .. "[sg_unbox_list_len(" .. a .. ") + 1];",
           "sg_unbox_str_list(" .. a .. ", " .. room .. ")"
  end)
-- room for boxing Scalar[] and str[] items (x is the parameter's name)
F.scalar_list.box_room = function(x) return "sg_any sg_room_" .. x .. "[" .. x .. ".len + 1];" end
F.str_list.box_room = F.scalar_list.box_room
F.opt_int_list = opt_list("int_list")
F.opt_float_list = opt_list("float_list")
F.opt_bool_list = opt_list("bool_list")
F.opt_str_list = opt_list("str_list")
F.opt_scalar_list = opt_list("scalar_list")
F.opt_str_list.box_room = function(x)
  return "sg_any sg_room_" .. x .. "[" .. x .. " ? " .. x .. "->len + 1 : 1];"
end
F.opt_scalar_list.box_room = F.opt_str_list.box_room

local STAR = ("*"):byte()

C.families = F

-- Returns: family -> { target = C type the out-pointer points to (the table's), init, box(x),
-- unbox(v, out) }
local R = {}
R.tensor = { init = "NULL",
  box = function(x) return "sg_any_tensor(" .. x .. ")" end,
  unbox = function(v, out) return "sg_result_tensor(" .. v .. ", " .. out .. ")" end }
R.opt_tensor = { init = "NULL",
  box = function(x) return "sg_box_opt_tensor(" .. x .. ")" end,
  unbox = function(v, out) return "sg_result_opt_tensor(" .. v .. ", " .. out .. ")" end }
R.tensor_list = { init = "{NULL, 0}",
  box = function(x) return "sg_box_tensor_list_result(" .. x .. ")" end,
  unbox = function(v, out) return "sg_unbox_tensor_list_result(" .. v .. ", " .. out .. ")" end }
R.int = { init = "0",
  box = function(x) return "sg_any_int(" .. x .. ")" end,
  unbox = function(v, out) return "sg_result_int(" .. v .. ", " .. out .. ")" end }
R.float = { init = "0",
  box = function(x) return "sg_any_float(" .. x .. ")" end,
  unbox = function(v, out) return "sg_result_float(" .. v .. ", " .. out .. ")" end }
R.bool = { init = "false",
  box = function(x) return "sg_any_bool(" .. x .. ")" end,
  unbox = function(v, out) return "sg_result_bool(" .. v .. ", " .. out .. ")" end }
R.scalar = { init = "{0}",
  box = function(x) return "sg_box_scalar_result(" .. x .. ")" end,
  unbox = function(v, out) return "sg_result_scalar(" .. v .. ", " .. out .. ")" end }
R.dtype = { init = "SG_FLOAT32",
  box = function(x) return "sg_box_tag_i(" .. T.dtype.tags[1] .. ", " .. x .. ")" end,
  unbox = function(v, out) return "sg_result_dtype(" .. v .. ", " .. out .. ")" end }
R.any = { init = "{0}",
  box = function(x) return x end,
  unbox = function(v, out) return "sg_result_any(" .. v .. ", " .. out .. ")" end }
C.returns = R

-- "T *" for T, "T **" for "T *".
function C.pointer_to(ctype)
  if ctype:byte(-1) == STAR then return ctype .. "*" end
  return ctype .. " *"
end

-- What a declaration of a parameter of the family's C type puts between type and name: ""
-- after a star ("sg_tensor *self"), else a space; and a result's out-pointer type.
-- A family the table has and this file has no code for is boxed as `any` (as its letters say).
for name, t in pairs(T) do
  if not F[name] and t.letter ~= T.any.letter or not R[name] and t.ret_letter ~= T.any.ret_letter then
    error("lib/c.lua: no code for the type family '" .. name .. "'")
  end
end
for name, f in pairs(F) do f.param = T[name].param end
for name, r in pairs(R) do r.target = T[name].result end
for _, f in pairs(F) do f.sep = f.param:byte(-1) == STAR and "" or " " end
for _, r in pairs(R) do r.out_param = C.pointer_to(r.target) end

function C.ret_family(r)
  local f = r.family
  if R[f] then return R[f] end
  return R.any
end

function C.family(a)
  return F[a.family] or F.any
end

-- Text from a schema file or the command line (a schema with its string defaults, the banner's
-- file names) made inert inside a /* */ comment: "*/" and "/*" are broken with a backslash
-- ("*\/", "/\*"), so is "??" ("?\?": no trigraph), control bytes become \ooo, and so does a
-- backslash that would end the line (a line splice), and bytes past 0x7f where the text is
-- not UTF-8. Any other text comes out as it is. The tool's ccomment does it (in C: every op's
-- schema goes through it, several times).
C.comment = ccomment

-- A declaration "T *name" / "T name" with the star against the name.
function C.decl(ctype, name)
  if ctype:byte(-1) == STAR then return ctype .. name end
  return ctype .. " " .. name
end

-- Whether the typed API can express the op (varargs / varret ops are boxed only).
function C.typed(op)
  return not op.varargs and not op.varret
end

-- What the typed API says about op, worked out once per op (C.info(op)):
--   typed       C.typed(op)
--   params      its C parameters: "sg_tensor *self, sg_tensor *other, sg_scalar alpha,
--               sg_tensor **ret" ("void" where there are none)
--   call_args   the same names as a call's arguments: "self, other, alpha, ret"
--   in_params, in_args   the same without the results: what a typed override's predicate
--               takes ("" where the op has no arguments)
--   keys        the key set expression of a typed call: its tensors' keys OR-ed ("0" without)
--   ret_names   its result parameters' names (each return's cname)
--   signature   op.signature: "ttS>t", what sg_call_boxed_sig needs to box the arguments and
--               unbox the results (derive works it out from the type table)
--   boxed_name  op.boxed_name: its boxing adapter's name, after the library's name and "_"
--               (ops with one name share one adapter: its code never names the op)
-- Rationale: every template asks every op for several of these; made in one pass over its
-- arguments and found with one lookup, they cost less than helpers that each built and kept
-- their own string.
local infos = {}
local P, A = {}, {} -- scratch: parameters, call arguments

-- An argument's parts of those: its parameter, its name, its keys (or false);
-- made once per argument table, which the ops share where their arguments are the same.
local parts = {}
local function arg_parts(a)
  local fam, name = a.family, a.cname
  local f = F[fam] or F.any
  local pa = { f.param .. f.sep .. name, name, f.keys and f.keys(name) or false }
  parts[a] = pa
  return pa
end

-- Ops whose argument and return lists are the same tables (the model shares lists the same in
-- every field) have the same info: by_lists[args][rets], for typed ops.
local by_lists = {}

local concat = table.concat
function C.info(op)
  local info = infos[op]
  if info then return info end
  local args, rets = op.args, op.returns
  local typed = C.typed(op)
  local same = typed and by_lists[args]
  info = same and same[rets]
  if info then
    infos[op] = info
    return info
  end
  local nargs, nrets = #args, #rets
  local names, keys = {}, nil
  for i = 1, nrets do names[i] = rets[i].cname end
  for i = 1, nargs do
    local a = args[i]
    local pa = parts[a] or arg_parts(a)
    P[i], A[i] = pa[1], pa[2]
    local k = pa[3]
    if k then keys = keys and keys .. " | " .. k or k end
  end
  for i = 1, nrets do
    local rf = rets[i].family
    P[nargs + i], A[nargs + i] = (R[rf] or R.any).out_param .. names[i], names[i]
  end
  local n = nargs + nrets
  info = {
    typed = typed,
    params = n == 0 and "void" or concat(P, ", ", 1, n),
    call_args = concat(A, ", ", 1, n),
    in_params = concat(P, ", ", 1, nargs),
    in_args = concat(A, ", ", 1, nargs),
    keys = keys or "0",
    ret_names = names,
    signature = op.signature,
    boxed_name = op.boxed_name,
  }
  infos[op] = info
  if typed then
    same = by_lists[args]
    if not same then
      same = {}
      by_lists[args] = same
    end
    same[rets] = info
  end
  return info
end

-- The same, one question at a time.
for _, name in ipairs({"params", "call_args", "in_params", "in_args", "keys", "ret_names", "signature",
                        "boxed_name"}) do
  C[name] = function(op) return C.info(op)[name] end
end

-- ---- composite kernels: structured ops and autogen variants ----------------------------

-- The meta function's parameters: the out op's arguments that are not out arguments.
function C.meta_params(op)
  local p = {}
  for _, a in ipairs(op.args) do
    if not a.is_out then p[#p + 1] = C.decl(C.family(a).param, a.cname) end
  end
  p[#p + 1] = "sg_meta *outs"
  return table.concat(p, ", ")
end

-- The C expression for argument i (a, of the op that caller's composite kernel calls) as the
-- model's caller.callee_args says where it comes from (derive.md, "C facts").
local fills = {null = "NULL", strided = "SG_STRIDED", ["false"] = "false"}
function C.arg_value(caller, i, a)
  local from = caller.callee_args[i]
  if type(from) == "string" then
    return fills[from] or error(caller.cname .. ": no value for " .. a.name .. " (" .. from .. ")")
  elseif from.dtype_of then
    local out = from.dtype_of.cname
    return a.family == "opt_dtype" and "&(sg_dtype){(sg_dtype)" .. out .. "->dtype}" or "(sg_dtype)" .. out .. "->dtype"
  elseif from.device_of then
    local out = from.device_of.cname
    return a.family == "opt_device" and "&" .. out .. "->device" or out .. "->device"
  end
  return from.cname
end

-- Arguments for a call of target (the op caller's composite kernel calls) from caller's kernel:
-- each C.arg_value, where `subst` may replace some by name ({name = "expr"}); then its result
-- pointers.
function C.call_of(target, subst, results, caller)
  local p = {}
  for i, a in ipairs(target.args) do p[i] = subst and subst[a.name] or C.arg_value(caller, i, a) end
  for _, r in ipairs(results) do p[#p + 1] = r end
  return table.concat(p, ", ")
end


-- Names by 1-based position i, PREFIX .. (i - 1) .. SUFFIX ("a0", "(&sg_args[0])"), each
-- made once: C.seq("a")[i]. Rationale: a number in a concatenation is printed anew each time.
local seqs = {}
function C.seq(prefix, suffix)
  suffix = suffix or ""
  local key = prefix .. "\0" .. suffix
  local t = seqs[key]
  if not t then
    t = setmetatable({}, {__index = function(self, i)
      local v = prefix .. (i - 1) .. suffix
      rawset(self, i, v)
      return v
    end})
    seqs[key] = t
  end
  return t
end

-- The boxing adapters a shard's ops need (each shard file defines its own, static): one per C
-- signature, in the order of their names. Returns one op of each signature (of `ops`, a
-- shard's ops; the adapters are written from its signature alone, so which op does not
-- matter), and each adapter's 0-based position by boxed name.
-- Rationale: the names are sorted as strings, with no Lua function called per comparison.
function C.shard_adapters(ops)
  local first, names = {}, {}
  for _, op in ipairs(ops) do
    local info = C.info(op)
    local name = info.boxed_name
    if info.typed and not first[name] then
      first[name] = op
      names[#names + 1] = name
    end
  end
  table.sort(names)
  local reps, index = {}, {}
  for i, name in ipairs(names) do
    reps[i] = first[name]
    index[name] = i - 1
  end
  return reps, index
end

-- Rationale: several templates ask the same op for the same strings; each is built once.
for _, name in ipairs({"meta_params"}) do
  local build, memo = C[name], {}
  C[name] = function(op)
    local v = memo[op]
    if v == nil then
      v = build(op)
      memo[op] = v == nil and false or v
    end
    return v or nil
  end
end

return C
