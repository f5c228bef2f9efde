// An H200-like device described by hand, so that can_run and the tuner's rules are tested
// without a GPU.
#pragma once

#include "tilemm/device.hpp"

namespace tilemm::testing {

inline DeviceInfo synthetic_h200() {
  DeviceInfo d;
  d.name = "Synthetic H200";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.max_threads_per_block = 1024;
  d.max_shared_per_block_optin = 227 * 1024;
  d.max_grid_x = 2147483647;
  d.max_grid_y = 65535;
  d.max_grid_z = 65535;
  d.l2_bytes = 60 << 20;  // the tuner's input mode depends on it (tuner/timing_method.hpp)
  return d;
}

// The same device with another compute capability: what can_run leaves to older GPUs.
inline DeviceInfo synthetic_h200_as(int cc_major, int cc_minor) {
  DeviceInfo d = synthetic_h200();
  d.cc_major = cc_major;
  d.cc_minor = cc_minor;
  return d;
}

}  // namespace tilemm::testing
