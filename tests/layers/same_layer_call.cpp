// The control of upward_call.cpp: a call into the core layer itself links with its objects.
#include "tilemm/precision.hpp"

const char* tilemm_probe_same_layer_call() { return tilemm::to_string(tilemm::Precision::high); }
