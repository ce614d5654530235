# cmake/dsl.cmake: DSL kernels ahead of time (docs/dsl.md): the DSL's compiler, and the build
# steps from declarations to artifacts.
#
# SG_DSL=AUTO (default) exports DSL kernels where SG_DSL_PYTHON has the pinned Triton, ON
# requires it, OFF builds without them. SG_DSL_PYTHON defaults to the virtual environment that
# `bash cmake/do deps` makes in the build folder (dsl-venv/). Without the compiler the build is a
# stock build: it says so, and the tests that need artifacts skip, saying why. SG_HAVE_CUTEDSL is
# set where that Python also has the pinned nvidia-cutlass-dsl, or SG_DSL_PREBUILT (a folder of
# artifacts exported elsewhere, which the export copies from) holds CuTeDSL's runtime.
#
#   sg_add_dsl(NAME DECLS a.yaml ... SCHEMAS s.yaml ... [TAGS tags.yaml ...])
#
# Where SG_HAVE_DSL and some DECLS are given: at build time, `schemagen --dsl a.yaml ...
# --dsl-plan PLAN SCHEMAS...` writes ${CMAKE_CURRENT_BINARY_DIR}/NAME/plan.json (the schemas
# hold the ops the declarations override) and tools/dsl_export.py compiles it into
# NAME/artifacts/ (the custom target NAME). Sets in the caller's scope NAME_SCHEMAGEN_ARGS
# (`--dsl a.yaml ... --dsl-artifacts DIR`, for the glue's schemagen call over the same schemas)
# and NAME_DEPENDS (what that call waits for), NAME_LINK and NAME_INCLUDE (the object artifacts
# archived after the export, the DSL's runtime, and their headers' folder); sg_add_glue(... DSL
# NAME) uses them and compiles LIB_dsl.c into the glue. All are empty otherwise, and the glue is
# generated as without DSL kernels.
#
#   sg_dsl_tests()
#
# From tests/: gives dsl_export and dsl_objects their Python (and dsl_objects the CUDA headers),
# and test_rt_dsl_cuda its images (nvcc cubins of
# tests/unit/test_rt_dsl_kernels.cu for sm_90 and sm_80, one the GPU cannot load, and with
# SG_HAVE_DSL the Triton artifacts of tests/data/dsl_test_plan.json.in).

set(SG_DSL AUTO CACHE STRING "Export DSL kernels ahead of time: AUTO, ON or OFF")
set_property(CACHE SG_DSL PROPERTY STRINGS AUTO ON OFF)
if(NOT SG_DSL MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "SG_DSL is '${SG_DSL}': use AUTO, ON or OFF")
endif()
set(SG_DSL_PYTHON "${CMAKE_BINARY_DIR}/dsl-venv/bin/python" CACHE FILEPATH
    "The Python with the pinned DSL compiler (bash cmake/do deps makes it)")
set(SG_DSL_PREBUILT "" CACHE PATH
    "A folder of artifacts exported elsewhere, copied where they match the plan (for a machine without a DSL's compiler)")
# The one version the artifacts are made with; declarations name it too (compiler: triton==...).
set(SG_DSL_TRITON_VERSION 3.6.0)
set(SG_DSL_CUTEDSL_VERSION 4.8.1)

set(SG_HAVE_DSL OFF)
set(SG_HAVE_CUTEDSL OFF)
if(NOT SG_DSL STREQUAL "OFF")
  set(why "")
  if(NOT EXISTS "${SG_DSL_PYTHON}")
    set(why "${SG_DSL_PYTHON} does not exist")
  else()
    # Rationale: the installed version from the package's metadata, without importing it (a
    # second or so per configure).
    execute_process(
      COMMAND "${SG_DSL_PYTHON}" -c "import importlib.metadata as m; print(m.version('triton'))"
      OUTPUT_VARIABLE found ERROR_VARIABLE err RESULT_VARIABLE rc
      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0)
      set(why "${SG_DSL_PYTHON} has no triton package")
    elseif(NOT found STREQUAL SG_DSL_TRITON_VERSION)
      set(why "${SG_DSL_PYTHON} has triton ${found}, not the pinned ${SG_DSL_TRITON_VERSION}")
    endif()
  endif()
  if(why STREQUAL "")
    set(SG_HAVE_DSL ON)
    # CuTeDSL's kernels need its package too, or its artifacts and runtime in SG_DSL_PREBUILT.
    execute_process(
      COMMAND "${SG_DSL_PYTHON}" -c "import importlib.metadata as m; print(m.version('nvidia-cutlass-dsl'))"
      OUTPUT_VARIABLE cute ERROR_QUIET RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(rc EQUAL 0 AND cute STREQUAL SG_DSL_CUTEDSL_VERSION)
      set(SG_HAVE_CUTEDSL ON)
      message(STATUS "schemagen: nvidia-cutlass-dsl ${cute}: CuTeDSL kernels are exported")
    elseif(SG_DSL_PREBUILT AND EXISTS "${SG_DSL_PREBUILT}/libcuda_dialect_runtime_static.a")
      set(SG_HAVE_CUTEDSL ON)
      message(STATUS "schemagen: CuTeDSL kernels come from ${SG_DSL_PREBUILT}")
    else()
      message(STATUS "schemagen: no nvidia-cutlass-dsl ${SG_DSL_CUTEDSL_VERSION} at ${SG_DSL_PYTHON}: building without CuTeDSL kernels")
    endif()
    message(STATUS "schemagen: triton ${SG_DSL_TRITON_VERSION} at ${SG_DSL_PYTHON}: DSL kernels are exported")
  elseif(SG_DSL STREQUAL "ON")
    message(FATAL_ERROR "SG_DSL=ON but ${why} (bash cmake/do deps installs it, or set SG_DSL_PYTHON)")
  else()
    message(STATUS "schemagen: ${why}: building without DSL kernels (bash cmake/do deps installs triton==${SG_DSL_TRITON_VERSION})")
  endif()
endif()

set(SG_DSL_EXPORT ${CMAKE_CURRENT_LIST_DIR}/../tools/dsl_export.py)
get_filename_component(SG_DSL_EXPORT ${SG_DSL_EXPORT} ABSOLUTE)
set(SG_DSL_OBJECTS_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/dsl_objects.cmake)

function(sg_add_dsl name)
  cmake_parse_arguments(D "" "" "DECLS;SCHEMAS;TAGS" ${ARGN})
  set(${name}_SCHEMAGEN_ARGS "" PARENT_SCOPE)
  set(${name}_DEPENDS "" PARENT_SCOPE)
  set(${name}_LINK "" PARENT_SCOPE)
  set(${name}_INCLUDE "" PARENT_SCOPE)
  if(NOT SG_HAVE_DSL OR NOT D_DECLS)
    return()
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${name})
  # the kernel sources the declarations name live beside them (triton/*.py)
  set(sources "")
  foreach(d ${D_DECLS})
    get_filename_component(ddir ${d} DIRECTORY)
    file(GLOB_RECURSE py CONFIGURE_DEPENDS ${ddir}/*.py)
    list(APPEND sources ${py})
  endforeach()
  list(REMOVE_DUPLICATES sources)
  # Rationale: both schemagen calls (the plan's here, the glue's) run in the project's source
  # folder and name the declaration files relative to it where they lie inside, so the
  # generated files' banners and comments do not depend on where the tree is checked out.
  set(dsl_args "")
  foreach(d ${D_DECLS})
    _schemagen_rel(rel ${d})
    list(APPEND dsl_args --dsl ${rel})
  endforeach()
  set(tag_args "")
  foreach(t ${D_TAGS})
    list(APPEND tag_args --tags ${t})
  endforeach()
  set(from "")
  if(SG_DSL_PREBUILT)
    set(from --from ${SG_DSL_PREBUILT})
  endif()
  add_custom_command(
    OUTPUT ${dir}/stamp
    BYPRODUCTS ${dir}/plan.json ${dir}/libobjects.a ${dir}/libdslrt.a
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}/artifacts
    COMMAND schemagen ${dsl_args} --dsl-plan ${dir}/plan.json ${tag_args} ${D_SCHEMAS}
    COMMAND ${CMAKE_COMMAND} -E env TRITON_CACHE_DIR=${CMAKE_BINARY_DIR}/dsl-triton-cache
            ${SG_DSL_PYTHON} ${SG_DSL_EXPORT} --plan ${dir}/plan.json --out ${dir}/artifacts
            ${from}
    COMMAND ${CMAKE_COMMAND} -DDIR=${dir}/artifacts -DAR=${CMAKE_AR}
            -DOBJECTS=${dir}/libobjects.a -DRUNTIME=${dir}/libdslrt.a
            -P ${SG_DSL_OBJECTS_SCRIPT}
    COMMAND ${CMAKE_COMMAND} -E touch ${dir}/stamp
    DEPENDS schemagen ${D_DECLS} ${D_SCHEMAS} ${D_TAGS} ${sources} ${SG_DSL_EXPORT}
            ${SG_DSL_OBJECTS_SCRIPT}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    COMMENT "DSL kernels: plan and export (${name})"
    VERBATIM)
  add_custom_target(${name} DEPENDS ${dir}/stamp)
  set(${name}_SCHEMAGEN_ARGS ${dsl_args} --dsl-artifacts ${dir}/artifacts PARENT_SCOPE)
  set(${name}_DEPENDS ${dir}/stamp PARENT_SCOPE)
  # object artifacts (CuTeDSL) link from these; their headers are included from the artifacts
  set(${name}_LINK ${dir}/libobjects.a ${dir}/libdslrt.a PARENT_SCOPE)
  set(${name}_INCLUDE ${dir}/artifacts PARENT_SCOPE)
endfunction()

function(sg_dsl_tests)
  set(target test_rt_dsl_cuda)
  if(SG_HAVE_DSL AND TEST dsl_export)
    set_tests_properties(dsl_export PROPERTIES ENVIRONMENT "SG_DSL_PYTHON=${SG_DSL_PYTHON}")
  endif()
  if(SG_HAVE_DSL AND TEST dsl_objects)
    set(env "SG_DSL_PYTHON=${SG_DSL_PYTHON}")
    if(CUDAToolkit_INCLUDE_DIRS)
      list(GET CUDAToolkit_INCLUDE_DIRS 0 inc)
      list(APPEND env "SG_CUDA_INCLUDE=${inc}")
    endif()
    set_tests_properties(dsl_objects PROPERTIES ENVIRONMENT "${env}")
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/dsl_test_images)
  set(src ${PROJECT_SOURCE_DIR}/tests/unit/test_rt_dsl_kernels.cu)
  set(outputs "")
  if(SG_HAVE_CUDA AND CMAKE_CUDA_COMPILER)
    foreach(arch 90 80)
      add_custom_command(
        OUTPUT ${dir}/sm${arch}.cubin
        COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
        COMMAND ${CMAKE_CUDA_COMPILER} -cubin -arch=sm_${arch} -o ${dir}/sm${arch}.cubin ${src}
        DEPENDS ${src}
        COMMENT "nvcc -cubin sm_${arch}: test_rt_dsl_kernels.cu"
        VERBATIM)
      list(APPEND outputs ${dir}/sm${arch}.cubin)
    endforeach()
    target_compile_definitions(${target} PRIVATE SG_DSL_TEST_CUBINS="${dir}")
  endif()
  if(SG_HAVE_DSL)
    configure_file(${PROJECT_SOURCE_DIR}/tests/data/dsl_test_plan.json.in ${dir}/plan.json @ONLY)
    file(GLOB py ${PROJECT_SOURCE_DIR}/kernels/dsl/triton/*.py)
    add_custom_command(
      OUTPUT ${dir}/triton/stamp
      COMMAND ${CMAKE_COMMAND} -E env TRITON_CACHE_DIR=${CMAKE_BINARY_DIR}/dsl-triton-cache
              ${SG_DSL_PYTHON} ${SG_DSL_EXPORT} --plan ${dir}/plan.json --out ${dir}/triton
      COMMAND ${CMAKE_COMMAND} -E touch ${dir}/triton/stamp
      DEPENDS ${dir}/plan.json ${py} ${SG_DSL_EXPORT}
      COMMENT "DSL kernels: the test artifacts"
      VERBATIM)
    list(APPEND outputs ${dir}/triton/stamp)
    target_compile_definitions(${target} PRIVATE SG_DSL_TEST_TRITON="${dir}/triton")
  endif()
  if(outputs)
    add_custom_target(${target}_images DEPENDS ${outputs})
    add_dependencies(${target} ${target}_images)
  endif()
endfunction()
