# cmake/schemagen.cmake: sg_add_glue(), generated glue as a static library.
#
#   sg_add_glue(TARGET LIB NAME SHARDS N SCHEMAS a.yaml ... [TAGS tags.yaml ...] [DSL D]
#               [KERNEL_KEYS key ...])
#
# Runs schemagen at build time into ${CMAKE_CURRENT_BINARY_DIR}/TARGET/ (NAME.h, NAME_K.h and
# NAME_K.c for K < N, NAME_table.c) and compiles those files into the static library TARGET,
# linked with the runtime. The tool rewrites only files whose bytes change, and an edited op
# changes only its shard's files and the table, so a rebuild compiles what the edit touched.
# DSL D names an sg_add_dsl(D ...) (cmake/dsl.cmake): where it exported artifacts, schemagen
# also gets the declarations and the artifacts and writes NAME_dsl.h and NAME_dsl.c, compiled
# in too. LIB must be a C identifier, SHARDS a positive count and SCHEMAS not empty: anything
# else stops the configure with a message naming the call (tests/glue_args.sh).
# KERNEL_KEYS CPU CUDA ... (or all) is schemagen's --kernel-keys: the kernels the schemas name
# under those dispatch keys are declared in NAME_kernels.h and registered by NAME_init(), so
# whatever links TARGET must define them (docs/cli.md).
function(sg_add_glue target)
  cmake_parse_arguments(G "" "LIB;SHARDS;DSL" "SCHEMAS;TAGS;KERNEL_KEYS" ${ARGN})
  # the arguments are checked here, at configure time, rather than by the build's schemagen
  # call (a missing SHARDS would name files NAME_-1.c)
  if(G_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "sg_add_glue(${target}): unknown arguments: ${G_UNPARSED_ARGUMENTS} "
            "(known: LIB, SHARDS, SCHEMAS, TAGS, DSL, KERNEL_KEYS)")
  endif()
  if(NOT "${G_LIB}" MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "sg_add_glue(${target}): LIB needs a C identifier (the generated "
            "files' and functions' prefix), not '${G_LIB}'")
  endif()
  if(NOT "${G_SHARDS}" MATCHES "^[1-9][0-9]*$" OR G_SHARDS GREATER 1000000)
    message(FATAL_ERROR "sg_add_glue(${target}): SHARDS needs a positive count of generated "
            "files, not '${G_SHARDS}'")
  endif()
  if(NOT G_SCHEMAS)
    message(FATAL_ERROR "sg_add_glue(${target}): SCHEMAS needs at least one schema file")
  endif()
  list(FIND G_KEYWORDS_MISSING_VALUES KERNEL_KEYS no_keys)
  if(NOT no_keys EQUAL -1)
    message(FATAL_ERROR "sg_add_glue(${target}): KERNEL_KEYS needs at least one dispatch key "
            "name (CPU, CUDA, CompositeExplicitAutograd, ...) or all")
  endif()
  foreach(k ${G_KERNEL_KEYS})
    if(NOT "${k}" MATCHES "^[A-Za-z][A-Za-z0-9]*$")
      message(FATAL_ERROR "sg_add_glue(${target}): KERNEL_KEYS needs dispatch key names "
              "(CPU, CUDA, CompositeExplicitAutograd, ...) or all, not '${k}'")
    endif()
  endforeach()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${target})
  set(outputs ${dir}/${G_LIB}.h ${dir}/${G_LIB}_table.c)
  math(EXPR last "${G_SHARDS} - 1")
  foreach(i RANGE ${last})
    list(APPEND outputs ${dir}/${G_LIB}_${i}.h ${dir}/${G_LIB}_${i}.c)
  endforeach()
  set(dsl_args "")
  set(dsl_deps "")
  if(G_DSL AND ${G_DSL}_SCHEMAGEN_ARGS)
    set(dsl_args ${${G_DSL}_SCHEMAGEN_ARGS})
    set(dsl_deps ${${G_DSL}_DEPENDS})
    list(APPEND outputs ${dir}/${G_LIB}_dsl.h ${dir}/${G_LIB}_dsl.c)
  endif()
  set(kernel_args "")
  if(G_KERNEL_KEYS)
    list(JOIN G_KERNEL_KEYS "," keys)
    set(kernel_args --kernel-keys ${keys})
    list(APPEND outputs ${dir}/${G_LIB}_kernels.h)
  endif()
  set(tag_args "")
  foreach(t ${G_TAGS})
    list(APPEND tag_args --tags ${t})
  endforeach()
  # Rationale: the generated files are byproducts of a stamp, not outputs, so that a file the
  # tool left untouched (same bytes) keeps its mtime and its object is not rebuilt.
  add_custom_command(
    OUTPUT ${dir}/stamp
    BYPRODUCTS ${outputs}
    COMMAND schemagen --lib ${G_LIB} --shards ${G_SHARDS} ${tag_args} ${dsl_args} ${kernel_args}
            -o ${dir}
            ${G_SCHEMAS}
    COMMAND ${CMAKE_COMMAND} -E touch ${dir}/stamp
    DEPENDS schemagen ${G_SCHEMAS} ${G_TAGS} ${dsl_deps}
    COMMENT "schemagen: ${target}"
    VERBATIM)
  add_custom_target(${target}_gen DEPENDS ${dir}/stamp)
  list(FILTER outputs EXCLUDE REGEX "\\.h$")
  add_library(${target} STATIC ${outputs})
  target_include_directories(${target} PUBLIC ${dir})
  target_link_libraries(${target} PUBLIC sg_runtime)
  if(G_DSL AND ${G_DSL}_LINK)
    # object artifacts: the DSL's headers (its code, so SYSTEM: our warnings are not its), its
    # objects and its runtime, then the CUDA runtime they call
    target_include_directories(${target} SYSTEM PRIVATE ${${G_DSL}_INCLUDE})
    target_link_libraries(${target} PUBLIC ${${G_DSL}_LINK} CUDA::cudart_static)
  endif()
  add_dependencies(${target} ${target}_gen)
endfunction()
