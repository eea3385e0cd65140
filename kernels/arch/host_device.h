// MLA_HOST_DEVICE: a function the kernels and host C++ (planner, tests) both compile, the same
// source on both sides. Device code under nvcc and hip-clang, plain inline C++ elsewhere; no GPU
// runtime header is included.
#pragma once

#ifndef MLA_HOST_DEVICE
#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__HIP__)
#if defined(__forceinline__)
#define MLA_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define MLA_HOST_DEVICE __host__ __device__ inline __attribute__((always_inline))
#endif
#else
#define MLA_HOST_DEVICE inline
#endif
#endif
