#!/usr/bin/env bash
# model_keys.sh: every key templates can read from the model is documented in
# docs/templates.md. A template walks the model of the golden schemas (and of the corpus,
# where present) and lists each table's keys by what the table is (model, op, arg, alias,
# group, variants, dispatch, call_arg, tag, type_family); each must appear in docs/templates.md as `key` in the
# table that describes that kind.
#
#   bash tests/model_keys.sh SCHEMAGEN [CORPUS_DIR]
set -uo pipefail

# shellcheck source=SCRIPTDIR/sg_test.bash
. "$(dirname "${BASH_SOURCE[0]}")/sg_test.bash"
sg_test_init model_keys "$@"
doc=$root/docs/templates.md
mkdir "$tmp/tpl"
cat >"$tmp/tpl/keys.tpl" <<'EOF'
%! output = "keys.txt"
% local seen = {}
% local function add(kind, t)
%   for k in pairs(t) do seen[kind .. " " .. tostring(k)] = true end
% end
% local function args(list)
%   for _, a in ipairs(list) do
%     add("arg", a)
%     if a.alias then add("alias", a.alias) end
%   end
% end
% add("model", model)
% for _, row in pairs(model.type_families) do add("type_family", row) end
% for _, tag in ipairs(model.tags) do add("tag", tag) end
% for _, op in ipairs(model.ops) do
%   add("op", op)
%   args(op.args)
%   args(op.returns)
%   if op.group then add("group", op.group) end
%   add("variants", op.variants)
%   for _, d in ipairs(op.dispatch or {}) do add("dispatch", d) end
%   for _, c in ipairs(op.callee_args or {}) do
%     if type(c) == "table" and not c.name then add("call_arg", c) end
%   end
% end
% local lines = {}
% for k in pairs(seen) do lines[#lines + 1] = k end
% table.sort(lines)
$(table.concat(lines, "\n"))
EOF

# The keys of KIND documented: the backquoted words in the first column of the table that
# follows the line "<!-- keys: KIND -->" in the document.
documented() {
    awk -v kind="$1" '
        $0 == "<!-- keys: " kind " -->" { on = 1; next }
        on && /^\|/ { seen_table = 1; split($0, cells, "|"); print cells[2]; next }
        on && NF && !/^\|/ && seen_table { exit }
        on && /^\|/ { seen_table = 1 }
    ' "$doc" | grep -o '`[^`]*`' | tr -d '`' | sed 's/^\[.*\]//'
}

check() { # check YAML... : the model of those inputs
    rm -rf "$tmp/o"
    if ! "$tool" -o "$tmp/o" --templates "$tmp/tpl" "$@" 2>"$tmp/err"; then
        fail "schemagen $*: $(cat "$tmp/err")"
        return
    fi
    while read -r kind key; do
        [ -n "$kind" ] || continue
        if ! documented "$kind" | grep -qx -- "$key"; then
            fail "the model's $kind key '$key' is not in docs/templates.md's $kind table"
        fi
    done <"$tmp/o/keys.txt"
}

check "$here/golden/codegen/ops.yaml"
if [ -n "$corpus" ] && [ -f "$corpus/native_functions.yaml" ]; then
    check "$corpus/native_functions.yaml" --tags "$corpus/tags.yaml"
else
    echo "note: no corpus: only the golden schemas' model is walked"
fi

sg_test_done "all checks passed"
