#!/usr/bin/env bash
# glue_args.sh: sg_add_glue (cmake/schemagen.cmake) refuses bad arguments when CMake configures,
# with a message that names the call and the argument, instead of a build that fails later
# (or writes NAME_-1.c). Runs `cmake -P` on scripts that include the helper; needs cmake.
#
#   bash tests/glue_args.sh SCHEMAGEN [CORPUS_DIR]
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
command -v cmake >/dev/null 2>&1 || { echo "skipped: no cmake"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# refused ARGS... -- MESSAGE: sg_add_glue(g ARGS...) stops the configure with MESSAGE
refused() {
    local args=() msg
    while [ "$1" != -- ]; do args+=("$1"); shift; done
    msg=$2
    printf 'include("%s/cmake/schemagen.cmake")\nsg_add_glue(g %s)\n' "$root" "${args[*]}" \
        >"$tmp/t.cmake"
    if cmake -P "$tmp/t.cmake" >"$tmp/out" 2>&1; then
        echo "FAIL: sg_add_glue(g ${args[*]}) was accepted" >&2
        failures=$((failures + 1))
    elif ! tr -s ' \n' '  ' <"$tmp/out" | grep -qF "$msg"; then
        echo "FAIL: sg_add_glue(g ${args[*]}): no '$msg' in: $(cat "$tmp/out")" >&2
        failures=$((failures + 1))
    fi
}

refused LIB my_ops SCHEMAS a.yaml -- "sg_add_glue(g): SHARDS needs a positive count of generated files, not ''"
refused LIB my_ops SHARDS 0 SCHEMAS a.yaml -- "SHARDS needs a positive count of generated files, not '0'"
refused LIB my_ops SHARDS -1 SCHEMAS a.yaml -- "SHARDS needs a positive count of generated files, not '-1'"
refused SHARDS 1 SCHEMAS a.yaml -- "sg_add_glue(g): LIB needs a C identifier (the generated files' and functions' prefix), not ''"
refused LIB my-ops SHARDS 1 SCHEMAS a.yaml -- "LIB needs a C identifier (the generated files' and functions' prefix), not 'my-ops'"
refused LIB my_ops SHARDS 1 -- "sg_add_glue(g): SCHEMAS needs at least one schema file"
refused extra LIB my_ops SHARDS 1 SCHEMAS a.yaml -- "sg_add_glue(g): unknown arguments: extra"
refused LIB my_ops SHARDS 1 SCHEMAS a.yaml KERNEL_KEYS -- "sg_add_glue(g): KERNEL_KEYS needs at least one dispatch key name (CPU, CUDA, CompositeExplicitAutograd, ...) or all"
refused LIB my_ops SHARDS 1 SCHEMAS a.yaml KERNEL_KEYS CPU,CUDA -- "sg_add_glue(g): KERNEL_KEYS needs dispatch key names (CPU, CUDA, CompositeExplicitAutograd, ...) or all, not 'CPU,CUDA'"

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "glue_args: ok"
