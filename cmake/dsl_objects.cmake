# cmake/dsl_objects.cmake: after an export, the object artifacts of DIR (CuTeDSL's PREFIX.o) in
# one archive OBJECTS, and DIR's copy of the DSL's runtime library as RUNTIME; each an empty
# archive where DIR has none, so the library links the same way with or without them. Files
# are replaced only when their bytes change.
#
#   cmake -DDIR=artifacts -DAR=ar -DOBJECTS=libobjects.a -DRUNTIME=libdslrt.a -P dsl_objects.cmake
foreach(v DIR AR OBJECTS RUNTIME)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "dsl_objects.cmake needs -D${v}=...")
  endif()
endforeach()

file(GLOB objects "${DIR}/*.o")
list(SORT objects)
set(tmp "${OBJECTS}.tmp")
file(REMOVE "${tmp}")
if(objects)
  # D: no timestamps or owners in the archive, so the same objects give the same bytes
  execute_process(COMMAND "${AR}" qcD "${tmp}" ${objects} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${AR} could not archive the objects of ${DIR}: ${err}")
  endif()
else()
  file(WRITE "${tmp}" "!<arch>\n")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${tmp}" "${OBJECTS}")
file(REMOVE "${tmp}")

set(rt "${DIR}/libcuda_dialect_runtime_static.a")
if(EXISTS "${rt}")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${rt}" "${RUNTIME}")
else()
  file(WRITE "${RUNTIME}.tmp" "!<arch>\n")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${RUNTIME}.tmp" "${RUNTIME}")
  file(REMOVE "${RUNTIME}.tmp")
endif()
