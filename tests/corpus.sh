#!/usr/bin/env bash
# corpus.sh: conformance over PyTorch's own native_functions.yaml and tags.yaml.
#
#   bash tests/corpus.sh SCHEMAGEN CORPUS_DIR
#
# Checks that the real corpus loads, groups and validates with no diagnostic at all; that it
# has the expected number of entries; that every schema printed in canonical form parses back
# to an identical model and prints back to the same bytes (the hidden --canonical-check); that
# the JSON is valid (where python3 is present) and that two runs give the same bytes.
# Exits 77 (skipped) when the corpus is absent.
set -uo pipefail

# shellcheck source=SCRIPTDIR/sg_test.bash
. "$(dirname "${BASH_SOURCE[0]}")/sg_test.bash"
sg_test_init corpus "$@"
sg_test_need_corpus
nf=$corpus/native_functions.yaml
tags=$corpus/tags.yaml
expected_ops=2674

# run NAME ARGS...: runs the tool; stdout in $tmp/NAME.out; any stderr or exit status fails.
run() {
    local name=$1 rc=0
    shift
    "$tool" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
    if [ "$rc" -ne 0 ] || [ -s "$tmp/$name.err" ]; then
        fail "schemagen $* exited $rc"
        head -n 40 "$tmp/$name.err" >&2
    fi
}

run summary --canonical-check --tags "$tags" "$nf"
run canonical --emit=canonical --tags "$tags" "$nf"
run json --emit=json --tags "$tags" "$nf"
run json2 --emit=json "$nf" "$tags" # a tags file recognised by content, given after the schemas

ops=$(wc -l <"$tmp/canonical.out")
[ "$ops" -eq "$expected_ops" ] || fail "$ops schemas in canonical form, expected $expected_ops"
grep -q "^ops: *$expected_ops\$" "$tmp/summary.out" || fail "the summary does not count $expected_ops ops"
grep -v -q '^aten::' "$tmp/canonical.out" && fail "a canonical line lacks the aten:: namespace"
cmp -s "$tmp/json.out" "$tmp/json2.out" || fail "--tags FILE and FILE give different JSON"

if command -v python3 >/dev/null 2>&1; then
    python3 - "$tmp/json.out" "$expected_ops" <<'EOF' || fail "the JSON is not valid or not complete"
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
assert len(doc["ops"]) == int(sys.argv[2]), len(doc["ops"])
assert doc["tags"], "no tags"
for op in doc["ops"]:
    assert op["namespace"] == "aten" and op["schema"].startswith("aten::"), op["schema"]
    assert op["yaml"]["func"], op["schema"]
EOF
else
    echo "note: no python3, JSON validity not checked" >&2
fi

run again --emit=json --tags "$tags" "$nf"
cmp -s "$tmp/json.out" "$tmp/again.out" || fail "two runs gave different bytes"

sg_test_done "$ops ops load, validate and round-trip; JSON valid and deterministic"
