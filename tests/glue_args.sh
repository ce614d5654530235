#!/usr/bin/env bash
# glue_args.sh: schemagen_add_library and sg_add_glue (cmake/schemagen.cmake) refuse bad
# arguments when CMake configures,
# with a message that names the call and the argument, instead of a build that fails later
# (or writes NAME_-1.c). Runs `cmake -P` on scripts that include the helper; needs cmake.
#
#   bash tests/glue_args.sh SCHEMAGEN [CORPUS_DIR]
set -uo pipefail

# shellcheck source=SCRIPTDIR/sg_test.bash
. "$(dirname "${BASH_SOURCE[0]}")/sg_test.bash"
sg_test_init_no_tool glue_args
command -v cmake >/dev/null 2>&1 || sg_test_skip "no cmake"

# refused FN ARGS... -- MESSAGE: FN(g ARGS...) stops the configure with MESSAGE
refused() {
    local fn=$1 args=() msg
    shift
    while [ "$1" != -- ]; do args+=("$1"); shift; done
    msg=$2
    printf 'include("%s/cmake/schemagen.cmake")\n%s(g %s)\n' "$root" "$fn" "${args[*]}" \
        >"$tmp/t.cmake"
    if cmake -P "$tmp/t.cmake" >"$tmp/out" 2>&1; then
        fail "$fn(g ${args[*]}) was accepted"
    elif ! tr -s ' \n' '  ' <"$tmp/out" | grep -qF "$msg"; then
        fail "$fn(g ${args[*]}): no '$msg' in: $(cat "$tmp/out")"
    fi
}

lib="LIB needs a C identifier (the generated files' and functions' prefix, usually the namespace)"
shards="SHARDS needs a positive count of generated files"
refused sg_add_glue LIB my_ops SCHEMAS a.yaml -- "sg_add_glue(g): $shards, not ''"
refused sg_add_glue LIB my_ops SHARDS 0 SCHEMAS a.yaml -- "$shards, not '0'"
refused sg_add_glue LIB my_ops SHARDS -1 SCHEMAS a.yaml -- "$shards, not '-1'"
refused sg_add_glue SHARDS 1 SCHEMAS a.yaml -- "sg_add_glue(g): $lib, not ''"
refused sg_add_glue LIB my-ops SHARDS 1 SCHEMAS a.yaml -- "$lib, not 'my-ops'"
refused sg_add_glue LIB my_ops SHARDS 1 -- "sg_add_glue(g): SCHEMAS needs at least one schema file"
refused sg_add_glue extra LIB my_ops SHARDS 1 SCHEMAS a.yaml -- "sg_add_glue(g): unknown arguments: extra"
# the newer name: SHARDS may be left out (one file), the rest as above
refused schemagen_add_library SCHEMAS a.yaml -- "schemagen_add_library(g): $lib, not ''"
refused schemagen_add_library LIB my_ops SHARDS x SCHEMAS a.yaml -- "$shards, not 'x'"
refused schemagen_add_library LIB my_ops SOURCES k.c -- "schemagen_add_library(g): SCHEMAS needs at least one schema file"
refused schemagen_add_library KERNEL LIB my_ops SCHEMAS a.yaml -- "unknown arguments: KERNEL"
keys="KERNEL_KEYS needs at least one dispatch key name (CPU, CUDA, CompositeExplicitAutograd, ...), all or NONE"
refused sg_add_glue LIB my_ops SHARDS 1 SCHEMAS a.yaml KERNEL_KEYS -- "sg_add_glue(g): $keys"
refused schemagen_add_library LIB my_ops SCHEMAS a.yaml KERNEL_KEYS -- "schemagen_add_library(g): $keys"
refused sg_add_glue LIB my_ops SHARDS 1 SCHEMAS a.yaml KERNEL_KEYS CPU,CUDA -- "sg_add_glue(g): KERNEL_KEYS needs dispatch key names (CPU, CUDA, CompositeExplicitAutograd, ...), all or NONE, not 'CPU,CUDA'"
# well-formed, but without the package (no schemagen::schemagen target) it says what to do
refused schemagen_add_library LIB my_ops SCHEMAS a.yaml -- "the schemagen package is not loaded: find_package(schemagen CONFIG REQUIRED) first"

sg_test_done
