# cmake/cuda.cmake: whether the CUDA toolkit is here, and how the runtime uses it.
#
# SG_CUDA=AUTO (default) uses the toolkit where CMake finds one, ON requires it, OFF builds
# without. With it, runtime/cuda.c is compiled with SG_HAVE_CUDA and linked against the static
# CUDA runtime (which loads the driver at run time, so the library still loads and runs on a
# machine without a GPU or driver: the CUDA backend then reports itself unavailable).
set(SG_CUDA AUTO CACHE STRING "Build the CUDA backend: AUTO, ON or OFF")
set_property(CACHE SG_CUDA PROPERTY STRINGS AUTO ON OFF)
if(NOT SG_CUDA MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "SG_CUDA is '${SG_CUDA}': use AUTO, ON or OFF")
endif()
set(SG_HAVE_CUDA OFF)
if(NOT SG_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(SG_HAVE_CUDA ON)
    # The kernels (kernels/cuda/) are CUDA C++: nvcc from the toolkit found, for sm_90 as SASS
    # and as PTX (newer GPUs JIT it) unless the user names architectures.
    if(NOT CMAKE_CUDA_COMPILER AND CUDAToolkit_NVCC_EXECUTABLE)
      set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
    endif()
    if(NOT CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CXX)
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    message(STATUS "schemagen: CUDA ${CUDAToolkit_VERSION} found: the CUDA backend is built")
  elseif(SG_CUDA STREQUAL "ON")
    message(FATAL_ERROR "SG_CUDA=ON but no CUDA toolkit was found")
  else()
    message(STATUS "schemagen: no CUDA toolkit: building CPU only (the CUDA backend reports itself unavailable)")
  endif()
endif()

# The imported target brings the toolkit's include directory as a system one (so its headers
# pass -Wpedantic) and the libraries the static runtime needs (dl, rt, pthread). VIS is how the
# CUDA runtime is linked: PUBLIC for a static library, PRIVATE for a shared one (inside it).
function(sg_runtime_use_cuda target vis)
  if(SG_HAVE_CUDA)
    target_compile_definitions(${target} PUBLIC SG_HAVE_CUDA=1)
    target_link_libraries(${target} ${vis} CUDA::cudart_static)
  endif()
endfunction()
