# sg_test.bash: what the script tests (tests/*.sh, tests/install/examples.sh) share, sourced
# from each as
#     . "$(dirname "${BASH_SOURCE[0]}")/sg_test.bash"
# It is not named *.sh so that tests/CMakeLists.txt's glob of script tests leaves it out.
# Exit codes the tests keep: 0 passed, 1 failed, 77 skipped (ctest's SKIP_RETURN_CODE).
# shellcheck shell=bash
# (the variables set here are read by the scripts that source this file)
# shellcheck disable=SC2034

# the tests folder and the source tree, from this file's place, so that a test runs from any
# folder
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
# the C compiler a test builds with: the caller's CC, else cc
cc=${CC:-cc}

# sg_test_init_no_tool NAME: for a test that runs no schemagen: $tmp, a folder removed at exit,
# and the failure count that fail adds to and sg_test_done reads.
sg_test_init_no_tool() {
    sg_test_name=$1
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    failures=0
}

# sg_test_init NAME SCHEMAGEN [CORPUS_DIR]: as above, and $tool, SCHEMAGEN made absolute (tests
# that change folder still find it), and $corpus ('' where none is given). Without SCHEMAGEN it
# prints the usage and exits 1.
sg_test_init() {
    local name=$1 dir
    [ $# -ge 2 ] || {
        echo "usage: bash tests/$name.sh SCHEMAGEN [CORPUS_DIR]" >&2
        exit 1
    }
    tool=$2
    if dir=$(cd "$(dirname "$tool")" 2>/dev/null && pwd); then
        tool=$dir/$(basename "$tool")
    fi
    corpus=${3:-}
    sg_test_init_no_tool "$name"
}

# sg_test_runtime: for a test that links programs with the runtime as built, in the tool's
# folder ($build): $rt_libs, the libraries such a program links (SG_RUNTIME_LIBS: what else
# the runtime of a CUDA build needs), and $san, the -fsanitize flags of a sanitized build,
# which the program must share. Whether the runtime is built is the test's to check.
sg_test_runtime() {
    build=$(dirname "$tool")
    # shellcheck disable=SC2206 # SG_RUNTIME_LIBS is a list of words
    rt_libs=("$build/libsg_runtime.a" "$build/libsg_schema.a" ${SG_RUNTIME_LIBS:-} -lpthread -lm -ldl)
    san=()
    # shellcheck disable=SC2054 # address,undefined: one flag's value
    case $(nm "$build/libsg_runtime.a" 2>/dev/null) in
    *__asan_*) san=(-fsanitize=address,undefined) ;;
    *__tsan_*) san=(-fsanitize=thread) ;;
    esac
}

# sg_test_compile DIR FILE...: each FILE (generated C, with its headers in DIR) compiles alone
# against the runtime's headers at -Wshadow -Werror -pedantic; fail names each that does not.
sg_test_compile() {
    local dir=$1 f
    shift
    for f in "$@"; do
        $cc -std=c11 -Wall -Wextra -Wshadow -Werror -pedantic -c -I"$dir" -I"$root/runtime" \
            -I"$root/gen/schema" "$f" -o "$f.o" || fail "$f does not compile with -Wshadow -Werror"
    done
}

# sg_test_link DIR LIB OUT SOURCE...: links the program OUT from SOURCE... and the glue
# generated into DIR for LIB (LIB_0.c, LIB_table.c) with the runtime as built (sg_test_runtime
# first); false, and nothing said, where it does not build.
sg_test_link() {
    local dir=$1 lib=$2 out=$3
    shift 3
    $cc -std=c11 -Wall -Wextra -Wshadow -Werror "${san[@]}" -I"$dir" -I"$here" -I"$root/runtime" \
        -I"$root/gen/schema" "$@" "$dir/${lib}_0.c" "$dir/${lib}_table.c" "${rt_libs[@]}" -o "$out"
}

# fail MESSAGE: reports one failed check and goes on, so that one run shows every failure.
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# fail_now MESSAGE: for a test whose later steps need the earlier ones: reports and exits 1.
fail_now() {
    echo "FAIL: $*" >&2
    exit 1
}

# t STATUS ARGS...: runs the tool with ARGS, which must exit with STATUS; its stdout in $out
# and its stderr in $err for the checks that follow. Where $t_limit is set, a run longer than
# that many seconds is stopped (exit 124), for inputs that could make the tool loop.
t() {
    local want=$1 rc=0
    shift
    if [ -n "${t_limit:-}" ]; then
        timeout "$t_limit" "$tool" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
    else
        "$tool" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
    fi
    out=$(cat "$tmp/out")
    err=$(cat "$tmp/err")
    [ "$rc" = "$want" ] || fail "schemagen $* exited $rc, not $want: $err"
}

# has TEXT PART: TEXT holds PART.
has() {
    case $1 in *"$2"*) ;; *) fail "no '$2' in: $1" ;; esac
}

# sg_test_skip WHY: the test cannot run here (a tool or an input is missing): exit 77.
sg_test_skip() {
    echo "skipped: $*" >&2
    exit 77
}

# sg_test_have_corpus: whether $corpus holds PyTorch's native_functions.yaml and tags.yaml.
sg_test_have_corpus() {
    [ -n "$corpus" ] && [ -r "$corpus/native_functions.yaml" ] && [ -r "$corpus/tags.yaml" ]
}

# sg_test_need_corpus: skips a test that is about the corpus where it is absent.
sg_test_need_corpus() {
    sg_test_have_corpus ||
        sg_test_skip "no corpus (native_functions.yaml and tags.yaml) in '$corpus'"
}

# sg_test_done [WHAT_PASSED]: the last line: the failure count and exit 1, else
# "NAME: WHAT_PASSED" (or "NAME: ok") and exit 0.
# shellcheck disable=SC2120 # WHAT_PASSED is optional
sg_test_done() {
    if [ "$failures" -ne 0 ]; then
        echo "$sg_test_name: $failures failure(s)" >&2
        exit 1
    fi
    echo "$sg_test_name: ${1:-ok}"
    exit 0
}
