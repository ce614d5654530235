#!/usr/bin/env bash
# sandbox.sh: what a template may not do (docs/templates.md, "The sandbox"): read files, run
# binary chunks, loop forever, take all memory, change the model, change what a built-in
# template writes; and that its errors name the file and line, helper modules included.
#
#   bash tests/sandbox.sh SCHEMAGEN [CORPUS_DIR]
set -uo pipefail

# shellcheck source=SCRIPTDIR/sg_test.bash
. "$(dirname "${BASH_SOURCE[0]}")/sg_test.bash"
sg_test_init sandbox "$@"
cat >"$tmp/ops.yaml" <<'EOF'
- func: abs(Tensor self) -> Tensor
  variants: function, method

- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
EOF
# each run of the tool (t) stopped after 60 s: templates here try to loop forever
t_limit=60
# tpl NAME TEXT: a fresh template folder holding NAME
tpl() {
    rm -rf "$tmp/tpl" "$tmp/o"
    mkdir -p "$tmp/tpl/lib"
    printf '%s' "$2" >"$tmp/tpl/$1"
}
run_tpl() { t "$1" -o "$tmp/o" --templates "$tmp/tpl" "${@:2}" "$tmp/ops.yaml"; }

# ---- a. no files, no printing, text chunks only ----
tpl a.tpl '%! output = "a.txt"
$(tostring(io) .. tostring(os) .. tostring(package) .. tostring(debug) .. tostring(require))
$(tostring(dofile) .. tostring(loadfile) .. tostring(print) .. tostring(string.dump))
'
run_tpl 0
[ "$(cat "$tmp/o/a.txt" 2>/dev/null)" = "$(printf 'nilnilnilnilnil\nnilnilnilnil')" ] ||
    fail "a template sees a library it should not: $(cat "$tmp/o/a.txt" 2>/dev/null)"
# a binary chunk (its signature, ESC "Lua") is refused, with or without a mode asked for
tpl b.tpl '%! output = "b.txt"
% local f, e = load("\27Lua\84\0", "x", "b")
$(tostring(f)) $(e)
% local g, e2 = load("return 1 + 1")
$(g())
'
run_tpl 0
has "$(cat "$tmp/o/b.txt" 2>/dev/null)" "nil attempt to load a binary chunk"
has "$(cat "$tmp/o/b.txt" 2>/dev/null)" "2"

# ---- b. a budget of instructions: loops and runaway strings stop, located ----
tpl loop.tpl '%! output = "l.txt"
% local n = 0
% while true do n = n + 1 end
'
start=$(date +%s)
run_tpl 1 --template-budget 1000000
has "$err" "$tmp/tpl/loop.tpl:3: the template used up its budget of 1000000 Lua instructions"
[ $(($(date +%s) - start)) -lt 20 ] || fail "an endless loop took too long to stop"
# pcall cannot hide a spent budget: the error goes on, and what catches it fails again
tpl pcall.tpl '%! output = "pc.txt"
% while true do pcall(function() while true do end end) end
'
start=$(date +%s)
run_tpl 1 --template-budget 1000000
has "$err" "$tmp/tpl/pcall.tpl:2: the template used up its budget"
[ $(($(date +%s) - start)) -lt 20 ] || fail "a loop of pcalls took too long to stop"
tpl xpcall.tpl '%! output = "xp.txt"
% local n = 0
% local function sum() for i = 1, 100000 do n = n + i end end
% while true do xpcall(sum, function(e) return e end) end
'
run_tpl 1 --template-budget 1000000
has "$err" "$tmp/tpl/xpcall.tpl:3: the template used up its budget"
# a loop in the %! line too
tpl head.tpl '%! output = (function() while true do end end)()
'
run_tpl 1 --template-budget 1000000
has "$err" "$tmp/tpl/head.tpl:1: the template used up its budget"
# a loop of big strings: what it allocates counts
tpl rep.tpl '%! output = "r.txt"
% local n = 0
% while true do n = n + #string.rep("x", 1000000) end
'
start=$(date +%s)
run_tpl 1 --template-budget 2000000
has "$err" "$tmp/tpl/rep.tpl:3: the template used up its budget"
[ $(($(date +%s) - start)) -lt 20 ] || fail "a loop of big strings took too long to stop"
# one huge string: the memory cap, at once
tpl huge.tpl '%! output = "h.txt"
$(#string.rep("x", 2000000000))
'
run_tpl 1
has "$err" "$tmp/tpl/huge.tpl: not enough memory"
# a pattern that backtracks without end runs in C, out of the count hook's reach: its work is
# bounded before it runs
tpl pat.tpl '%! output = "p.txt"
% local s = string.rep("a", 5000)
$(s:gsub("%w", "b"):sub(1, 3)) $(s:find("aab", 1, true) or "none") $(select(2, s:gsub("a", "")))
$(tostring(s:find(".-.-.-b")))
'
start=$(date +%s)
run_tpl 1
has "$err" "$tmp/tpl/pat.tpl:4: a pattern match may take up to"
[ $(($(date +%s) - start)) -lt 20 ] || fail "a pathological pattern took too long to stop"
# the corpus renders far below the default budget: within a fiftieth of it, in one shard
if [ -n "${2:-}" ] && [ -f "$2/native_functions.yaml" ]; then
    rm -rf "$tmp/corpus"
    t 0 --shards 1 --template-budget 20000000 -o "$tmp/corpus" "$2/native_functions.yaml" --tags "$2/tags.yaml"
fi
run_tpl 2 --template-budget 0
run_tpl 2 --template-budget x

# ---- c. errors in helper modules name their file and line, and the template's ----
tpl c.tpl '%! output = "c.txt"
% local m = import "helper"
$(m.f(nil))
'
printf 'local M = {}\nfunction M.f(x)\n  return x.field\nend\nreturn M\n' >"$tmp/tpl/lib/helper.lua"
run_tpl 1
has "$err" "$tmp/tpl/lib/helper.lua:3: attempt to index a nil value (local 'x')"
has "$err" "called from $tmp/tpl/c.tpl:3"
# error() with a level of 0, and an error object that is not a string, are located too
printf 'return {f = function() error("plain", 0) end}\n' >"$tmp/tpl/lib/helper.lua"
run_tpl 1
has "$err" "$tmp/tpl/lib/helper.lua:1: plain"
has "$err" "called from $tmp/tpl/c.tpl:3"

# ---- d. a user's template cannot change what a built-in writes ----
rm -rf "$tmp/ref"
t 0 -o "$tmp/ref" "$tmp/ops.yaml"
tpl patch.tpl '%! output = "{lib}_patch.txt"
% string.format = function() return "PATCHED" end
% local C = import "c"
% for k in pairs(C) do C[k] = function() return "PATCHED" end end
% getmetatable("").__index = {}
patched
'
run_tpl 0
for f in "$tmp/ref"/*; do
    cmp -s "$f" "$tmp/o/$(basename "$f")" || fail "a user template changed the built-in $(basename "$f")"
done
# a render's _w kept where a later render finds it cannot write into a render that is over
tpl keep.tpl '%! output = "k{shard}.txt", per_shard = true
% local m = import "keep"
% if m.w then m.w("late") end
% m.w = _w
% setmetatable({}, {__gc = function() _w("gone") end})
kept
'
printf 'return {}\n' >"$tmp/tpl/lib/keep.lua"
t 1 --shards 3 -o "$tmp/o" --templates "$tmp/tpl" "$tmp/ops.yaml"
has "$err" "$tmp/tpl/keep.tpl:3: _w of a render that is over"
# two templates that write one file: an error naming both
tpl x.tpl '%! output = "{lib}.h"
'
run_tpl 1
has "$err" "$tmp/tpl/x.tpl and templates/ops.h.tpl both write 'ops.h'"
# a user template named like a built-in replaces it (no error)
tpl ops.h.tpl '%! output = "{lib}.h"
mine
'
run_tpl 0
[ "$(cat "$tmp/o/ops.h" 2>/dev/null)" = mine ] || fail "a template named like a built-in did not replace it"

# ---- e. the model is read-only ----
for stmt in 'model.ops = {}' 'model.ops[1].name = "x"' 'ops[1].args[1].type = "int"' \
    'table.insert(model.tags, 1)' 'rawset(model, "x", 1)' 'ops[1] = false' \
    'setmetatable(model.ops[1], nil)' 'local _, s = pairs(model.ops[1]); s.name = "x"' \
    'getmetatable(_ENV).__index.model = {}'; do
    tpl w.tpl "%! output = \"w.txt\"
% local ok = true
% $stmt
"
    run_tpl 1
    grep -q -F "$tmp/tpl/w.tpl:3:" "$tmp/err" || fail "'$stmt' was not refused at its line: $err"
done
# pairs does not go through a global next a template replaced
tpl n.tpl '%! output = "n.txt"
% _G.next = function(t, k) if rawget(t, "name") then rawset(t, "name", "x") end end
% for _ in pairs(model.ops[1]) do end
$(model.ops[1].name)
'
run_tpl 0
[ "$(cat "$tmp/o/n.txt" 2>/dev/null)" = abs ] || fail "a replaced next changed the model"
# reading works as on plain tables: pairs, next, #, ipairs, identity
tpl r.tpl '%! output = "r.txt"
% local n = 0
% for k, v in pairs(model.ops[1]) do n = n + 1 end
% local first = next(model.ops)
$(#model.ops) $(#ops) $(first) $(tostring(n > 10)) $(tostring(model.ops[1] == ops[1]))
% for i, a in ipairs(model.ops[2].args) do
$(i) $(a.name)
% end
'
run_tpl 0
[ "$(cat "$tmp/o/r.txt" 2>/dev/null)" = "$(printf '2 2 1 true true\n1 self\n2 other\n3 alpha')" ] ||
    fail "reading the model: $(cat "$tmp/o/r.txt" 2>/dev/null)"

sg_test_done "all checks passed"
