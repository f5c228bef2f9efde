// tilemm: an SGEMM library that JIT-compiles kernel variants with NVRTC, tunes them on the GPU it
// runs on, and dispatches every call to the stored winner. Include this one header.
#pragma once

#include "tilemm/autotune.hpp"
#include "tilemm/context.hpp"
#include "tilemm/device.hpp"
#include "tilemm/error.hpp"
#include "tilemm/gemm.hpp"
#include "tilemm/variant.hpp"
#include "tilemm/blas.hpp"
