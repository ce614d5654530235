# cmake/install.cmake: what `cmake --install` puts under the prefix (docs/building.md):
#
#   bin/schemagen                          the tool (its templates are built in)
#   lib/libsg_runtime.a, libsg_runtime.so  the runtime, static and shared
#   lib/libsg_schema.a                     the schema parser the static runtime links
#   lib/libsg_aten.a, libsg_aten_cpu.a     the aten ops' generated glue and CPU kernels
#   lib/libsg_aten_cuda.a                  their CUDA kernels, where built
#   include/schemagen/                     the public headers (runtime/sg_*.h, the kernel
#                                          libraries' sg_*.h, the generated aten*.h)
#   lib/cmake/schemagen/                   the CMake package: find_package(schemagen CONFIG)
#   lib/pkgconfig/schemagen-*.pc           pkg-config: schemagen-runtime, schemagen-aten,
#                                          schemagen-aten-cuda (where built)
#
# The runtime's internal headers (rt_*.h) and the generator's sources stay private.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SG_INSTALL_INC ${CMAKE_INSTALL_INCLUDEDIR}/schemagen)
set(SG_INSTALL_CMAKE ${CMAKE_INSTALL_LIBDIR}/cmake/schemagen)

# Installed names: libsg_aten.a for the glue, and the package's target names.
set_target_properties(sg_aten_glue PROPERTIES OUTPUT_NAME sg_aten EXPORT_NAME aten)
set_target_properties(sg_schema PROPERTIES EXPORT_NAME schema)
set_target_properties(sg_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(sg_runtime_shared PROPERTIES EXPORT_NAME runtime_shared)
set_target_properties(sg_aten_cpu PROPERTIES EXPORT_NAME aten_cpu)
set(sg_libs sg_schema sg_runtime sg_runtime_shared sg_aten_glue sg_aten_cpu)
if(TARGET sg_aten_cuda)
  set_target_properties(sg_aten_cuda PROPERTIES EXPORT_NAME aten_cuda)
  list(APPEND sg_libs sg_aten_cuda)
endif()

install(TARGETS schemagen EXPORT schemagen-targets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ${sg_libs} EXPORT schemagen-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${SG_INSTALL_INC})

file(GLOB sg_public_headers ${PROJECT_SOURCE_DIR}/runtime/sg_*.h
     ${PROJECT_SOURCE_DIR}/kernels/cpu/sg_*.h)
if(TARGET sg_aten_cuda)
  list(APPEND sg_public_headers ${PROJECT_SOURCE_DIR}/kernels/cuda/sg_aten_cuda.h)
endif()
get_target_property(sg_aten_headers sg_aten_glue SCHEMAGEN_HEADERS)
install(FILES ${sg_public_headers} ${sg_aten_headers} DESTINATION ${SG_INSTALL_INC})

# The package: the targets, the helper, and the dependencies the targets' interfaces name.
install(EXPORT schemagen-targets NAMESPACE schemagen:: DESTINATION ${SG_INSTALL_CMAKE})
set(SG_PKG_CUDA ${SG_HAVE_CUDA})
set(SG_PKG_OPENMP ${OpenMP_C_FOUND})
set(SG_PKG_OPENBLAS ${OPENBLAS_FOUND})
configure_package_config_file(cmake/schemagen-config.cmake.in
  ${PROJECT_BINARY_DIR}/schemagen-config.cmake INSTALL_DESTINATION ${SG_INSTALL_CMAKE})
# 0.x: a minor version may change the ABI (sg_runtime_check_abi says so at run time)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/schemagen-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/schemagen-config.cmake
              ${PROJECT_BINARY_DIR}/schemagen-config-version.cmake
              ${PROJECT_SOURCE_DIR}/cmake/schemagen.cmake
        DESTINATION ${SG_INSTALL_CMAKE})

# pkg-config: the libraries' link lines written out, since pkg-config knows no CMake targets.
# The runtime resolves to the shared library where the linker prefers it (the usual case);
# --static gives the static one's dependencies.
# prefix=${pcfiledir}/..: relative to the file, so `cmake --install --prefix P` works wherever P is.
file(RELATIVE_PATH SG_PC_UP /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
string(REGEX REPLACE "/$" "" SG_PC_UP "${SG_PC_UP}")
set(SG_PC_THREADS ${CMAKE_THREAD_LIBS_INIT})
set(SG_PC_CUDA "")
if(SG_HAVE_CUDA)
  set(SG_PC_CUDA "-L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt")
endif()
set(SG_PC_ATEN_DEPS "-lm")
if(OpenMP_C_FOUND)
  string(APPEND SG_PC_ATEN_DEPS " ${OpenMP_C_FLAGS}")
endif()
if(OPENBLAS_FOUND)
  list(JOIN OPENBLAS_LDFLAGS " " blas)
  string(APPEND SG_PC_ATEN_DEPS " ${blas}")
endif()
set(sg_pcs schemagen-runtime schemagen-aten)
if(TARGET sg_aten_cuda)
  set(SG_PC_CUBLAS "-L${CUDAToolkit_LIBRARY_DIR} -lcublas -lcublasLt -lstdc++")
  list(APPEND sg_pcs schemagen-aten-cuda)
endif()
foreach(pc ${sg_pcs})
  configure_file(cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
