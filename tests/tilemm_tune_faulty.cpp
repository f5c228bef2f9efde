// tilemm-tune with the test-only faulty family registered: the candidates faulty_m0 (illegal
// address) and faulty_m1 (hang) join every tuning, and the run must still succeed.
#include <unistd.h>

#include <iostream>

#include "family_registry.hpp"
#include "kernel_sources.hpp"
#include "tune_cli.hpp"

namespace tilemm::detail {
const std::vector<EmbeddedTemplate>& test_only_templates();  // generated from tests/kernel_templates
}

namespace {

using namespace tilemm;

// One 16 x 16 block per 16 x 16 tile of C, like the naive kernel: a grid that fills the GPU, so
// the tuner's underfill rule does not prune these before they run.
detail::LaunchGeometry over_c(const Variant&, const Problem& p) {
  detail::LaunchGeometry g;
  g.grid_x64 = static_cast<std::uint64_t>((p.N + 15) / 16);
  g.grid_y64 = static_cast<std::uint64_t>((p.M + 15) / 16);
  g.grid[0] = static_cast<unsigned>(g.grid_x64);
  g.grid[1] = static_cast<unsigned>(g.grid_y64);
  g.block[0] = g.block[1] = 16;
  return g;
}
std::size_t no_shared(const Variant&) { return 0; }

detail::Family faulty_family() {
  detail::Family f;
  f.name = "faulty";
  f.template_file = "faulty.cu";
  f.params = {{"m", "MODE", {0, 1}}};
  f.geometry = over_c;
  f.shared_bytes = no_shared;
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  for (const auto& t : detail::test_only_templates())
    if (t.file == "faulty.cu")
      detail::register_extra_family(faulty_family(), t);
  return cli::run_tune_cli(argc, argv, std::cout, std::cerr, isatty(STDERR_FILENO) == 1);
}
