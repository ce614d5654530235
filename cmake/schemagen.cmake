# cmake/schemagen.cmake: schemagen_add_library(), an op library generated from schema files.
# Installed with the package (find_package(schemagen CONFIG) includes it) and used in this tree.
#
#   schemagen_add_library(TARGET LIB NAME SCHEMAS a.yaml ... [SOURCES kernel.c ...]
#                         [SHARDS N] [TAGS tags.yaml ...] [KERNEL_KEYS key ... | NONE] [DSL D]
#                         [DERIVATIVES derivatives.yaml])
#
# Runs schemagen at build time into ${CMAKE_CURRENT_BINARY_DIR}/TARGET-generated/ (NAME.h,
# NAME_K.h and NAME_K.c for K < N, NAME_table.c) and compiles those files and SOURCES (the
# kernels: C, or CUDA where the project enables it) into the static library TARGET, linked with
# schemagen::runtime. NAME (the files' and functions' prefix) is usually the namespace.
# KERNEL_KEYS: the dispatch keys whose kernels, as `dispatch:` names them, NAME_init() registers
# (their C declarations in NAME_kernels.h, included by NAME.h); default: every key the schemas
# list; NONE: none (the kernels are then registered by hand through NAME_op_register).
# SHARDS: how many files the ops are spread over (default 1; more compile in parallel).
# The tool rewrites only files whose bytes change, and an edited op changes only its shard's
# files and the table, so a rebuild compiles what the edit touched; generation re-runs when a
# schema, a tags file or the tool (its templates are built in) changed.
# DSL D names an sg_add_dsl(D ...) of this source tree (cmake/dsl.cmake): where it exported
# artifacts, schemagen also writes NAME_dsl.h and NAME_dsl.c, compiled in too.
# DERIVATIVES: a derivatives.yaml (docs/autograd.md): schemagen also writes NAME_autograd.h and
# NAME_autograd.c (the Autograd kernels; NAME_autograd_init() registers them), compiled in too.
# Arguments are checked at configure time: anything wrong stops the configure with a message
# naming the call (tests/glue_args.sh).
#
#   sg_add_glue(TARGET LIB NAME SHARDS N SCHEMAS ... [TAGS ...] [KERNEL_KEYS ...] [DSL D]
#               [DERIVATIVES d.yaml])
#
# The older name: SHARDS is required, and KERNEL_KEYS defaults to none.

# OUT: FILE relative to the project's source folder where it lies inside, else absolute.
function(_schemagen_rel out file)
  get_filename_component(abs ${file} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${abs})
  if(rel MATCHES "^\\.\\./" OR IS_ABSOLUTE "${rel}")
    set(rel ${abs})
  endif()
  set(${out} ${rel} PARENT_SCOPE)
endfunction()

function(_schemagen_library fn target shards_default keys_default)
  cmake_parse_arguments(G "" "LIB;SHARDS;DSL;DERIVATIVES" "SCHEMAS;TAGS;SOURCES;KERNEL_KEYS"
                        ${ARGN})
  set(where "${fn}(${target})")
  # checked here, not by the build's schemagen call (a missing SHARDS would name files NAME_-1.c)
  if(G_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unknown arguments: ${G_UNPARSED_ARGUMENTS} "
            "(known: LIB, SCHEMAS, SOURCES, SHARDS, TAGS, KERNEL_KEYS, DSL, DERIVATIVES)")
  endif()
  if(NOT "${G_LIB}" MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "${where}: LIB needs a C identifier (the generated files' and "
            "functions' prefix, usually the namespace), not '${G_LIB}'")
  endif()
  if(NOT DEFINED G_SHARDS AND shards_default)
    set(G_SHARDS ${shards_default})
  endif()
  if(NOT "${G_SHARDS}" MATCHES "^[1-9][0-9]*$" OR G_SHARDS GREATER 1000000)
    message(FATAL_ERROR "${where}: SHARDS needs a positive count of generated files, not "
            "'${G_SHARDS}'")
  endif()
  if(NOT G_SCHEMAS)
    message(FATAL_ERROR "${where}: SCHEMAS needs at least one schema file")
  endif()
  list(FIND G_KEYWORDS_MISSING_VALUES KERNEL_KEYS no_keys)
  if(NOT no_keys EQUAL -1)
    message(FATAL_ERROR "${where}: KERNEL_KEYS needs at least one dispatch key name (CPU, CUDA, "
            "CompositeExplicitAutograd, ...), all or NONE")
  endif()
  foreach(k ${G_KERNEL_KEYS})
    if(NOT "${k}" MATCHES "^[A-Za-z][A-Za-z0-9]*$")
      message(FATAL_ERROR "${where}: KERNEL_KEYS needs dispatch key names (CPU, CUDA, "
              "CompositeExplicitAutograd, ...), all or NONE, not '${k}'")
    endif()
  endforeach()
  if(NOT DEFINED G_KERNEL_KEYS)
    set(G_KERNEL_KEYS ${keys_default})
  endif()
  if(NOT TARGET schemagen::schemagen OR NOT TARGET schemagen::runtime)
    message(FATAL_ERROR "${where}: the schemagen package is not loaded: "
            "find_package(schemagen CONFIG REQUIRED) first")
  endif()

  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${target}-generated)
  set(headers ${dir}/${G_LIB}.h)
  set(sources ${dir}/${G_LIB}_table.c)
  math(EXPR last "${G_SHARDS} - 1")
  foreach(i RANGE ${last})
    list(APPEND headers ${dir}/${G_LIB}_${i}.h)
    list(APPEND sources ${dir}/${G_LIB}_${i}.c)
  endforeach()
  set(key_args "")
  if(NOT G_KERNEL_KEYS STREQUAL "NONE")
    list(JOIN G_KERNEL_KEYS "," keys)
    set(key_args --kernel-keys ${keys})
    list(APPEND headers ${dir}/${G_LIB}_kernels.h)
  endif()
  set(dsl_args "")
  set(dsl_deps "")
  if(G_DSL AND ${G_DSL}_SCHEMAGEN_ARGS)
    set(dsl_args ${${G_DSL}_SCHEMAGEN_ARGS})
    set(dsl_deps ${${G_DSL}_DEPENDS})
    list(APPEND headers ${dir}/${G_LIB}_dsl.h)
    list(APPEND sources ${dir}/${G_LIB}_dsl.c)
  endif()
  # Rationale: the tool runs in the project's source folder and is given the schema and tags
  # files relative to it where they lie inside, so the generated files' banners name them the
  # same way wherever the project is checked out (same input, same bytes).
  set(schema_args "")
  foreach(f ${G_SCHEMAS})
    _schemagen_rel(rel ${f})
    list(APPEND schema_args ${rel})
  endforeach()
  set(deriv_args "")
  if(G_DERIVATIVES)
    _schemagen_rel(rel ${G_DERIVATIVES})
    set(deriv_args --derivatives ${rel})
    list(APPEND headers ${dir}/${G_LIB}_autograd.h)
    list(APPEND sources ${dir}/${G_LIB}_autograd.c)
  endif()
  set(tag_args "")
  foreach(t ${G_TAGS})
    _schemagen_rel(rel ${t})
    list(APPEND tag_args --tags ${rel})
  endforeach()
  # Rationale: the generated files are byproducts of a stamp, not outputs, so that a file the
  # tool left untouched (same bytes) keeps its mtime and its object is not rebuilt.
  add_custom_command(
    OUTPUT ${dir}/stamp
    BYPRODUCTS ${headers} ${sources}
    COMMAND schemagen::schemagen --lib ${G_LIB} --shards ${G_SHARDS} ${tag_args} ${key_args}
            ${dsl_args} ${deriv_args} -o ${dir} ${schema_args}
    COMMAND ${CMAKE_COMMAND} -E touch ${dir}/stamp
    DEPENDS schemagen::schemagen ${G_SCHEMAS} ${G_TAGS} ${G_DERIVATIVES} ${dsl_deps}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    COMMENT "schemagen: ${target}"
    VERBATIM)
  add_custom_target(${target}_gen DEPENDS ${dir}/stamp)
  add_library(${target} STATIC ${sources} ${G_SOURCES})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${dir}>)
  target_link_libraries(${target} PUBLIC schemagen::runtime)
  # the generated headers, for install(FILES) of a library that ships them
  set_target_properties(${target} PROPERTIES SCHEMAGEN_HEADERS "${headers}")
  if(G_DSL AND ${G_DSL}_LINK)
    # object artifacts: the DSL's headers (its code, so SYSTEM: our warnings are not its), its
    # objects and its runtime, then the CUDA runtime they call
    target_include_directories(${target} SYSTEM PRIVATE ${${G_DSL}_INCLUDE})
    target_link_libraries(${target} PUBLIC ${${G_DSL}_LINK} CUDA::cudart_static)
  endif()
  add_dependencies(${target} ${target}_gen)
endfunction()

function(schemagen_add_library target)
  _schemagen_library(schemagen_add_library ${target} 1 all ${ARGN})
endfunction()

function(sg_add_glue target)
  _schemagen_library(sg_add_glue ${target} "" NONE ${ARGN})
endfunction()
