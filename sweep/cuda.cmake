# The CUDA sweep engine (`hintsim sweep --engine cuda`, sweep/sweep_eval_cuda.*) is built
# with CMake's CUDA language when a CUDA compiler is found: nvcc on PATH, $CUDACXX, or the
# toolkit's default prefix /usr/local/cuda. Otherwise it is not built, and `hintsim doctor`
# and `--engine cuda` say why (HINTSIM_CUDA_SWEEP_WHY). Included from the top level, where
# the language must be enabled. Default target: sm_90 (H100/H200); -DCMAKE_CUDA_ARCHITECTURES
# picks others.
include(CheckLanguage)
if(NOT DEFINED ENV{CUDACXX} AND NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
  set(ENV{CUDACXX} /usr/local/cuda/bin/nvcc)
endif()
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  enable_language(CUDA)
  set(HINTSIM_HAVE_CUDA_SWEEP 1)
  set(HINTSIM_CUDA_SWEEP_WHY
    "built with nvcc ${CMAKE_CUDA_COMPILER_VERSION} for CUDA architectures ${CMAKE_CUDA_ARCHITECTURES}")
  message(STATUS "hintsim: CUDA compiler ${CMAKE_CUDA_COMPILER}: sweep --engine cuda enabled")
else()
  set(HINTSIM_HAVE_CUDA_SWEEP 0)
  set(HINTSIM_CUDA_SWEEP_WHY
    "not built: CMake found no CUDA compiler (nvcc on PATH, CUDACXX, /usr/local/cuda/bin/nvcc)")
  message(STATUS "hintsim: no CUDA compiler, sweep --engine cuda not built")
endif()
