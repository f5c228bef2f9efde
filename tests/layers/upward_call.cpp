// A core-layer function calling autotune(), which the api layer defines: it must not link with
// the core layer's objects (tests/layers/link_probe.sh).
#include "tilemm/autotune.hpp"

tilemm::AutotuneResult tilemm_probe_upward_call() { return tilemm::autotune(64, 64, 64); }
