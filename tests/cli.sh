#!/usr/bin/env bash
# cli.sh: the command line's behaviour (docs/cli.md): help, version, usage errors, missing
# files, -o and its atomic write, nothing printed on failure, determinism.
#
#   bash tests/cli.sh SCHEMAGEN [CORPUS_DIR]
set -uo pipefail

tool=${1:?usage: bash tests/cli.sh SCHEMAGEN [CORPUS_DIR]}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# Small inputs of its own, so that these checks do not hang on the golden case's details.
golden=$tmp/in
mkdir "$golden"
cat >"$golden/ops.yaml" <<'EOF'
- func: abs(Tensor self) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: abs
  tags: core

- func: my_ops::short_kernel(Tensor x) -> Tensor
EOF
cat >"$golden/tags.yaml" <<'EOF'
- tag: core
  desc: In the core set.
EOF

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# t EXPECTED_STATUS ARGS...: runs the tool; stdout in $out, stderr in $err.
t() {
    local want=$1 rc=0
    shift
    "$tool" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
    out=$(cat "$tmp/out")
    err=$(cat "$tmp/err")
    [ "$rc" -eq "$want" ] || fail "schemagen $* exited $rc, expected $want (stderr: $err)"
}
has() { grep -q -F -- "$2" <<<"$1" || fail "expected '$2' in: $1"; }

# ---- help, version, usage errors ----
t 0 --help
has "$out" "usage: schemagen [options] FILE..."
has "$out" "--emit=KIND"
[ -z "$err" ] || fail "--help wrote to stderr"
t 0 -h
has "$out" "usage: schemagen"
t 0 --version
grep -q -E '^schemagen [0-9]+\.[0-9]+\.[0-9]+$' <<<"$out" || fail "--version printed '$out'"

t 2 --x "$golden/ops.yaml"
has "$err" "schemagen: error: unknown option '--x'"
has "$err" "usage: schemagen [options] FILE..."
[ -z "$out" ] || fail "an unknown option printed on stdout"
t 2
has "$err" "no input files"
has "$err" "usage: schemagen"
t 2 --emit=xml "$golden/ops.yaml"
has "$err" "unknown --emit kind 'xml'"
t 2 "$golden/ops.yaml" -o
has "$err" "option '-o' needs a value"
t 2 --max-errors=many "$golden/ops.yaml"

# ---- inputs ----
t 1 "$tmp/missing.yaml"
has "$err" "missing.yaml"
[ -z "$out" ] || fail "a missing file printed on stdout"

t 0 "$golden/ops.yaml" "$golden/tags.yaml"
has "$out" "ops:"
has "$out" "namespaces: aten"
t 0 --emit canonical -- "$golden/ops.yaml"
has "$out" "my_ops::short_kernel(Tensor x) -> Tensor"

# A broken entry beside good ones: errors on stderr, a count, nothing on stdout.
printf -- '- func: ok(Tensor self) -> Tensor\n- func: bad(Tensor self -> Tensor\n' >"$tmp/bad.yaml"
t 1 --emit=json "$tmp/bad.yaml"
[ -z "$out" ] || fail "a failing run printed on stdout"
has "$err" "bad.yaml:2:"
grep -q -E '^[0-9]+ errors? generated\.$' "$tmp/err" || fail "no 'N errors generated.' line: $err"

# ---- -o DIR ----
t 0 -o "$tmp/out1/sub" "$golden/ops.yaml" "$golden/tags.yaml"
[ -z "$out" ] || fail "-o without --emit printed on stdout"
[ -f "$tmp/out1/sub/model.json" ] || fail "-o did not write model.json"
"$tool" --emit=json "$golden/ops.yaml" "$golden/tags.yaml" >"$tmp/direct.json"
cmp -s "$tmp/direct.json" "$tmp/out1/sub/model.json" || fail "model.json differs from --emit=json"
[ -z "$(find "$tmp/out1/sub" -mindepth 1 ! -name model.json)" ] || fail "-o left other files behind"

cp "$tmp/out1/sub/model.json" "$tmp/before.json"
touch -d '2001-01-01' "$tmp/out1/sub/model.json"
t 1 -o "$tmp/out1/sub" "$tmp/bad.yaml"
cmp -s "$tmp/before.json" "$tmp/out1/sub/model.json" || fail "a failing run changed model.json"
t 0 -o "$tmp/out1/sub" "$golden/ops.yaml" "$golden/tags.yaml"
[ "$(stat -c %Y "$tmp/out1/sub/model.json")" -lt 1000000000 ] ||
    fail "an unchanged model.json was rewritten"
t 1 -o "$tmp/out2" "$tmp/bad.yaml"
[ ! -e "$tmp/out2" ] || fail "a failing run created the -o folder"
t 0 -o "$tmp/out3" --emit=summary "$golden/ops.yaml"
has "$out" "ops:"
[ -f "$tmp/out3/model.json" ] || fail "-o with --emit did not write model.json"
: >"$tmp/afile"
t 1 -o "$tmp/afile" "$golden/ops.yaml"
has "$err" "afile"

# ---- determinism ----
for emit in json canonical summary; do
    "$tool" --emit=$emit "$golden/ops.yaml" "$golden/tags.yaml" >"$tmp/a" 2>&1
    "$tool" --emit=$emit "$golden/ops.yaml" "$golden/tags.yaml" >"$tmp/b" 2>&1
    cmp -s "$tmp/a" "$tmp/b" || fail "two runs of --emit=$emit gave different bytes"
done

if [ "$failures" -ne 0 ]; then
    echo "cli: $failures check(s) failed" >&2
    exit 1
fi
echo "cli: all checks passed"
