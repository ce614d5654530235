#!/usr/bin/env bash
# install/examples.sh: schemagen as a new user gets it. Installs the build into a temporary
# prefix, checks what is there (and that nothing private is), then builds and runs each example
# (examples/my_ops, examples/backend) from that prefix alone, once through the CMake package
# and once through pkg-config; and examples/my_ops once more in a project that adds schemagen's
# source tree with add_subdirectory.
#
#   bash tests/install/examples.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
# shellcheck source=SCRIPTDIR/../sg_test.bash
. "$(dirname "${BASH_SOURCE[0]}")/../sg_test.bash"
sg_test_init_no_tool install/examples
prefix=$tmp/prefix
jobs=${SG_JOBS:-2}

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail_now "cmake --install"; }

# what is installed, and what is not
for f in bin/schemagen lib/libsg_runtime.a lib/libsg_runtime.so lib/libsg_aten_cpu.a \
         lib/cmake/schemagen/schemagen-config.cmake lib/cmake/schemagen/schemagen.cmake \
         lib/pkgconfig/schemagen-runtime.pc lib/pkgconfig/schemagen-aten.pc \
         include/schemagen/sg_runtime.h include/schemagen/aten.h include/schemagen/sg_aten_cpu.h; do
    [ -e "$prefix/$f" ] || fail_now "not installed: $f"
done
for f in include/schemagen/rt_dispatch.h include/schemagen/rt_internal.h \
         include/schemagen/sg_schema.h include/schemagen/cpu.h; do
    [ ! -e "$prefix/$f" ] || fail_now "installed, but private: $f"
done
"$prefix/bin/schemagen" --version >/dev/null || fail_now "the installed tool does not run"

# 1. CMake: each example configured with the prefix as its only hint
for ex in my_ops backend; do
    cmake -S "$src/examples/$ex" -B "$tmp/cmake-$ex" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_BUILD_TYPE=Release >"$tmp/cmake-$ex.log" 2>&1 ||
        { cat "$tmp/cmake-$ex.log"; fail_now "configure examples/$ex against the package"; }
    cmake --build "$tmp/cmake-$ex" -j "$jobs" >>"$tmp/cmake-$ex.log" 2>&1 ||
        { cat "$tmp/cmake-$ex.log"; fail_now "build examples/$ex against the package"; }
done
"$tmp/cmake-my_ops/my_ops_demo" || fail_now "examples/my_ops (CMake) failed"
"$tmp/cmake-backend/npu_demo" || fail_now "examples/backend (CMake) failed"

# 2. pkg-config: the tool from the prefix, then the C compiler with pkg-config's flags
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
rpath=-Wl,-rpath,$prefix/lib
gen=$tmp/pc/my_ops
"$prefix/bin/schemagen" --lib my_ops --kernel-keys CPU -o "$gen" "$src/examples/my_ops/my_ops.yaml"
# shellcheck disable=SC2046 # pkg-config's output is meant to be split into words
"$cc" -Wall -Werror -I"$gen" -I"$src/examples/my_ops" -o "$tmp/pc/my_ops_demo" \
    "$src/examples/my_ops/main.c" "$src/examples/my_ops/my_ops_cpu.c" "$gen"/*.c \
    $(pkg-config --cflags --libs schemagen-runtime) "$rpath" -lm ||
    fail_now "build examples/my_ops with pkg-config"
"$tmp/pc/my_ops_demo" || fail_now "examples/my_ops (pkg-config) failed"
# shellcheck disable=SC2046
"$cc" -Wall -o "$tmp/pc/npu_demo" "$src/examples/backend/npu.c" \
    $(pkg-config --cflags --libs schemagen-aten schemagen-runtime) "$rpath" ||
    fail_now "build examples/backend with pkg-config"
"$tmp/pc/npu_demo" || fail_now "examples/backend (pkg-config) failed"
# 3. add_subdirectory: a project that builds schemagen as part of itself, in a folder named
# schemagen (where the tool must not collide with it), and the example beside it
mkdir -p "$tmp/super"
cat >"$tmp/super/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.20)
project(super LANGUAGES C)
add_subdirectory("$src" schemagen)
add_subdirectory("$src/examples/my_ops" my_ops)
EOF
cmake -S "$tmp/super" -B "$tmp/super/build" -DSG_CUDA=OFF -DCMAKE_BUILD_TYPE=Release \
    >"$tmp/super.log" 2>&1 || { cat "$tmp/super.log"; fail_now "configure a project adding schemagen"; }
cmake --build "$tmp/super/build" -j "$jobs" --target my_ops_demo >>"$tmp/super.log" 2>&1 ||
    { cat "$tmp/super.log"; fail_now "build examples/my_ops with schemagen added as a subdirectory"; }
[ -x "$tmp/super/build/schemagen/schemagen" ] || fail_now "the tool is not in the subdirectory's build folder"
"$tmp/super/build/my_ops/my_ops_demo" || fail_now "examples/my_ops (add_subdirectory) failed"
sg_test_done
