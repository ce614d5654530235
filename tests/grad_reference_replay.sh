#!/usr/bin/env bash
# grad_reference_replay.sh: test_cpu_grad_reference (the replay of PyTorch's gradients) on small
# files written here with gradients worked out by hand, so the harness is held to its word
# before tests/data/grad_reference.bin exists: a right file matches (mul with a broadcast and a
# transposed argument and a non-contiguous upstream gradient, sum to 0-dim, max.dim with no
# gradient for its indices); cumsum and an in-place op on a clone either match or are named as
# not covered, never failed; a wrong element, a gradient where the file says None, a wrong shape
# or dtype fail naming the case; a missing file skips (77); a truncated file, bytes past the
# last case, a bad magic, a bad flag, a gradient count that is not the leaf count and a case
# with no upstream gradient at all fail with a message. And test_cpu_grad_conformance (the same
# program built for tests/data/conformance_grad.tar.xz) on version 2 files: a case torch raised
# passes where our backward fails too ("errors matched") and fails where ours succeeds; a list
# argument's integer item gets no gradient; a listed case that differs counts as listed, one that
# agrees fails; a version 1 file is refused. Needs python3 (to write the files) and the test
# programs beside schemagen.
#
#   bash tests/grad_reference_replay.sh SCHEMAGEN [CORPUS_DIR]
. "$(dirname "${BASH_SOURCE[0]}")/sg_test.bash"
sg_test_init grad_reference_replay "$@"

replay=$(dirname "$tool")/tests/test_cpu_grad_reference
conform=$(dirname "$tool")/tests/test_cpu_grad_conformance
[ -x "$replay" ] || sg_test_skip "$replay is not built"
[ -x "$conform" ] || sg_test_skip "$conform is not built"
command -v python3 >/dev/null || sg_test_skip "no python3 to write the files"

# writes $tmp/VARIANT.bin for each variant named
write() {
    python3 - "$tmp" "$@" <<'EOF'
import struct, sys

out, variants = sys.argv[1], sys.argv[2:]
F32, F64, I64 = 6, 7, 4
NONE, BOOL, INT, TENSOR, TENSOR_LIST = 0, 1, 2, 10, 15


def s(x):
    e = x.encode()
    return struct.pack("<H", len(e)) + e


def tensor(dt, sizes, data, layout=0):
    """data: flat values in the order stored (for layout 1: the transposed tensor's)."""
    b = struct.pack("<BB", dt, len(sizes)) + b"".join(struct.pack("<q", n) for n in sizes)
    b += struct.pack("<B", layout)
    fmt = {F32: "<f", F64: "<d", I64: "<q"}[dt]
    raw = b"".join(struct.pack(fmt, v) for v in data)
    return b + struct.pack("<Q", len(raw)) + raw


def tv(*a, **k):
    return struct.pack("<B", TENSOR) + tensor(*a, **k)


def case(fam, name, overload, args, flags_rg, ups, wants, flags=0, label="",
         rtol=1e-9, atol=1e-12, error=None):
    b = s(fam) + s(name) + s(overload) + s(label) + struct.pack("<B", flags)
    if error is not None:  # version 2: flags bit 1, torch raised
        b += s(error)
    b += struct.pack("<dd", rtol, atol)
    b += struct.pack("<B", len(args)) + b"".join(args)
    b += bytes(flags_rg)
    b += struct.pack("<B", len(ups)) + b"".join(ups)
    b += struct.pack("<B", len(wants)) + b"".join(wants)
    return b


none = struct.pack("<B", NONE)
x = [0.5, -1.25, 2.0, 1.5, 0.25, -3.0]          # [2, 3]
y = [2.0, -0.5, 1.5]                              # [3]
u = [1.0, 2.0, -1.0, 0.5, -2.0, 3.0]              # [2, 3]
gx = [u[i] * y[i % 3] for i in range(6)]
gy = [u[j] * x[j] + u[3 + j] * x[3 + j] for j in range(3)]


def cases(v):
    out = []
    wx = list(gx)
    if v == "wrong":
        wx[0] += 0.5
    out.append(case("binary", "aten::mul", "Tensor", [tv(F64, [2, 3], x), tv(F64, [3], y)],
                    [1, 1], [tv(F64, [2, 3], u)], [tv(F64, [2, 3], wx), tv(F64, [3], gy)],
                    label="broadcast"))
    # self is [3, 2], stored transposed: the stored [2, 3] data is x, so self[i][j] = x[j][i];
    # the upstream gradient [3, 2] is stored transposed as well
    o2 = [0.5, 1.0, -1.5, 2.0, 0.25, -0.75]
    up2 = [1.0, -2.0, 0.5, 3.0, -1.0, 0.25]   # stored: the [2, 3] transpose of the gradient
    up2_logical = [up2[j * 3 + i] for i in range(3) for j in range(2)]
    out.append(case("binary", "aten::mul", "Tensor",
                    [tv(F64, [3, 2], x, layout=1), tv(F64, [3, 2], o2)], [1, 0],
                    [tv(F64, [3, 2], up2, layout=1)],
                    [tv(F64, [3, 2], [up2_logical[k] * o2[k] for k in range(6)])],
                    label="transposed self and upstream"))
    want = tv(F32, [2, 2], [1.5] * 4)
    if v == "none":
        want = none
    elif v == "shape":
        want = tv(F32, [4], [1.5] * 4)
    elif v == "dtype":
        want = tv(F64, [2, 2], [1.5] * 4)
    out.append(case("reduce", "aten::sum", "", [tv(F32, [2, 2], [1, 2, 3, 4]), none], [1, 0],
                    [tv(F32, [], [1.5])], [want], rtol=1e-6, atol=1e-7))
    m = [0.5, 3.0, -1.0, 2.5, -2.0, 1.0]      # [2, 3], row maxima at 1 and 3
    out.append(case("reduce", "aten::max", "dim",
                    [tv(F64, [2, 3], m), struct.pack("<Bq", INT, 1), struct.pack("<BB", BOOL, 0)],
                    [1, 0, 0], [tv(F64, [2], [0.75, -1.5]), none],
                    [tv(F64, [2, 3], [0, 0.75, 0, -1.5, 0, 0])], label="indices get none"))
    out.append(case("reduce", "aten::cumsum", "",
                    [tv(F64, [3], [1, 2, 3]), struct.pack("<Bq", INT, 0), none], [1, 0, 0],
                    [tv(F64, [3], [1.0, 2.0, 4.0])], [tv(F64, [3], [7.0, 6.0, 4.0])]))
    out.append(case("inplace", "aten::eq_", "Scalar",
                    [tv(F64, [2, 2], [1, 0.5, 0.5, 2]), struct.pack("<Bd", 3, 0.5)], [1, 0],
                    [tv(F64, [2, 2], [1, 1, 1, 1])], [tv(F64, [2, 2], [0, 0, 0, 0])],
                    flags=1))
    if v == "badflag":
        out[0] = out[0].replace(bytes([1, 1]) + struct.pack("<B", 1) + bytes([TENSOR]),
                                bytes([2, 1]) + struct.pack("<B", 1) + bytes([TENSOR]), 1)
    if v == "noroot":
        out[3] = case("reduce", "aten::max", "dim",
                      [tv(F64, [2, 3], m), struct.pack("<Bq", INT, 1),
                       struct.pack("<BB", BOOL, 0)], [1, 0, 0], [none, none],
                      [tv(F64, [2, 3], [0] * 6)])
    if v == "count":
        out[2] = case("reduce", "aten::sum", "", [tv(F32, [2, 2], [1, 2, 3, 4]), none], [1, 0],
                      [tv(F32, [], [1.5])], [want, want])
    return out


def v2_cases():
    out = [case("binary", "aten::mul", "Tensor", [tv(F64, [2, 3], x), tv(F64, [3], y)],
                [1, 1], [tv(F64, [2, 3], u)], [tv(F64, [2, 3], gx), tv(F64, [3], gy)],
                label="binary aten::mul Tensor agrees")]
    # torch raised in the backward; so does ours (narrow_copy has no derivative)
    out.append(case("other", "aten::narrow_copy", "",
                    [tv(F64, [2, 3], x), struct.pack("<Bq", INT, 1), struct.pack("<Bq", INT, 0),
                     struct.pack("<Bq", INT, 2)], [1, 0, 0, 0], [tv(F64, [2, 2], [1] * 4)], [],
                    flags=2, label="other aten::narrow_copy - raised",
                    error="RuntimeError: the derivative for 'narrow_copy' is not implemented",
                    rtol=0, atol=0))
    # torch raised (says the file); ours gives gradients
    out.append(case("reduce", "aten::sum", "", [tv(F32, [2, 2], [1, 2, 3, 4]), none], [1, 0],
                    [tv(F32, [], [1.5])], [], flags=2, label="reduce aten::sum - differs",
                    error="RuntimeError: made up", rtol=0, atol=0))
    # cat of a float64 and an int64 tensor: only the first requires grad
    cat = struct.pack("<BI", TENSOR_LIST, 2) + tensor(F64, [2], [1, 2]) + tensor(I64, [2], [3, 4])
    out.append(case("other", "aten::cat", "", [cat, struct.pack("<Bq", INT, 0)], [1, 0],
                    [tv(F64, [4], [0.5, -1, 2, 3])], [tv(F64, [2], [0.5, -1])],
                    label="other aten::cat - an integer item"))
    return out


for v in variants:
    cs = v2_cases() if v == "v2" else cases(v)
    body = b"".join(cs)
    head = (b"SGGRDREX" if v == "badmagic" else b"SGGRDREF") + struct.pack(
        "<II", 2 if v == "v2" else 1, len(cs))
    data = head + body
    if v == "truncated":
        data = data[:-3]
    elif v == "trailing":
        data += b"\0"
    with open("%s/%s.bin" % (out, v), "wb") as f:
        f.write(data)
EOF
}

write good wrong none shape dtype truncated trailing badmagic badflag count noroot v2 ||
    fail_now "could not write the files"

# run VARIANT STATUS: the replay of $tmp/VARIANT.bin exits with STATUS; its output in $out
run() {
    local st=0
    out=$("$replay" "$tmp/$1.bin" 2>&1) || st=$?
    [ "$st" -eq "$2" ] || fail "$1: exit $st, want $2; output:"$'\n'"$out"
}

run good 0
has "$out" "test_cpu_grad_reference: 6 cases: "
has "$out" " 0 failed (0 crashed)"
case $out in *FAIL*) fail "good: a FAIL line: $out" ;; esac
# the four cases whose backward is there match; cumsum and eq_ match or are named
matched=$(printf '%s\n' "$out" | sed -n 's/.*: 6 cases: \([0-9]*\) matched.*/\1/p')
[ "${matched:-0}" -ge 4 ] || fail "good: $matched matched, want at least 4: $out"
printf '%s\n' "$out" | grep '^not covered: ' | grep -v -e 'aten::cumsum (1 of 1 cases)' \
    -e 'aten::eq_.Scalar (1 of 1 cases)' && fail "good: another op not covered: $out"

run wrong 1
has "$out" "FAIL [binary] aten::mul.Tensor(float64[2, 3] requires_grad, float64[3] requires_grad)"
has "$out" "element [0, 0]: got 2, want 2.5 (rtol 1e-09, atol 1e-12); 1 of 6 elements differ"
has "$out" "elements differ (the gradient of leaf 0)"
has "$out" " 1 failed (0 crashed)"
run none 1
has "$out" "leaf 0: a gradient where torch gives None"
run shape 1
has "$out" "shape [2, 2], want [4]"
run dtype 1
has "$out" "dtype float32, want float64"

run truncated 1
has "$out" "case 6 of 6 (at byte "
has "$out" "malformed or truncated"
run trailing 1
has "$out" "1 bytes after the last of 6 cases"
run badmagic 1
has "$out" "not a version 1 SGGRDREF file (its first 8 bytes are not the magic)"
run badflag 1
has "$out" "case 1 of 6 (at byte 16 of "
has "$out" "a requires-grad flag is neither 0 nor 1"
run count 1
has "$out" "case 3 of 6"
has "$out" "the count of gradients is not the count of leaves"
run noroot 1
has "$out" "case 4 of 6"
has "$out" "no output gets an upstream gradient"

st=0
out=$("$replay" "$tmp/absent.bin" 2>&1) || st=$?
[ "$st" -eq 77 ] || fail "absent: exit $st, want 77: $out"
has "$out" "skipped: $tmp/absent.bin is missing"
has "$out" "(make it with tests/reference/make_grad_reference.py)"

# the conformance replay: FILE LIST STATUS
conf() {
    local st=0
    out=$("$conform" "$tmp/$1.bin" "$2" 2>&1) || st=$?
    [ "$st" -eq "$3" ] || fail "conformance $1 $2: exit $st, want $3; output:"$'\n'"$out"
}
: >"$tmp/empty.txt"
printf '# to fix: made up\nreduce aten::sum - differs\n' >"$tmp/listed.txt"
printf 'binary aten::mul Tensor agrees\nreduce aten::sum - differs\n' >"$tmp/agrees.txt"
conf v2 "$tmp/empty.txt" 1
has "$out" "FAIL [reduce] reduce aten::sum - differs"
has "$out" "torch raised RuntimeError: made up; our backward succeeded"
has "$out" "test_cpu_grad_conformance: 4 cases: 2 matched, 1 failed (0 crashed), 1 errors matched"
has "$out" "  other         2 cases:    1 passed,   0 failed,    1 errors matched"
conf v2 "$tmp/listed.txt" 0
has "$out" " 0 failed (0 crashed)"
has "$out" "; 1 listed differences of 1"
conf v2 "$tmp/agrees.txt" 1
has "$out" "FAIL [binary] binary aten::mul Tensor agrees"
has "$out" "listed as differing from PyTorch, but agrees: take it off the list"
conf good "$tmp/empty.txt" 1
has "$out" "not a version 2 to 3 SGGRDREF file (another version)"

sg_test_done "the replay matches, fails, skips and refuses as it should"
