# cmake/schemagen.cmake: sg_add_glue(), generated glue as a static library.
#
#   sg_add_glue(TARGET LIB NAME SHARDS N SCHEMAS a.yaml ... [TAGS tags.yaml ...])
#
# Runs schemagen at build time into ${CMAKE_CURRENT_BINARY_DIR}/TARGET/ (NAME.h, NAME_K.h and
# NAME_K.c for K < N, NAME_table.c) and compiles those files into the static library TARGET,
# linked with the runtime. The tool rewrites only files whose bytes change, and an edited op
# changes only its shard's files and the table, so a rebuild compiles what the edit touched.
function(sg_add_glue target)
  cmake_parse_arguments(G "" "LIB;SHARDS" "SCHEMAS;TAGS" ${ARGN})
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${target})
  set(outputs ${dir}/${G_LIB}.h ${dir}/${G_LIB}_table.c)
  math(EXPR last "${G_SHARDS} - 1")
  foreach(i RANGE ${last})
    list(APPEND outputs ${dir}/${G_LIB}_${i}.h ${dir}/${G_LIB}_${i}.c)
  endforeach()
  set(tag_args "")
  foreach(t ${G_TAGS})
    list(APPEND tag_args --tags ${t})
  endforeach()
  # Rationale: the generated files are byproducts of a stamp, not outputs, so that a file the
  # tool left untouched (same bytes) keeps its mtime and its object is not rebuilt.
  add_custom_command(
    OUTPUT ${dir}/stamp
    BYPRODUCTS ${outputs}
    COMMAND schemagen --lib ${G_LIB} --shards ${G_SHARDS} ${tag_args} -o ${dir} ${G_SCHEMAS}
    COMMAND ${CMAKE_COMMAND} -E touch ${dir}/stamp
    DEPENDS schemagen ${G_SCHEMAS} ${G_TAGS}
    COMMENT "schemagen: ${target}"
    VERBATIM)
  add_custom_target(${target}_gen DEPENDS ${dir}/stamp)
  list(FILTER outputs EXCLUDE REGEX "\\.h$")
  add_library(${target} STATIC ${outputs})
  target_include_directories(${target} PUBLIC ${dir})
  target_link_libraries(${target} PUBLIC sg_runtime)
  add_dependencies(${target} ${target}_gen)
endfunction()
