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

detail::LaunchGeometry one_block(const Variant&, const Problem&) {
  detail::LaunchGeometry g;
  g.block[0] = 32;
  return g;
}
std::string valid(const Variant&) { return {}; }
std::size_t no_shared(const Variant&) { return 0; }
int any_alignment(const Variant&) { return 1; }

}  // namespace

int main(int argc, char** argv) {
  for (const auto& t : detail::test_only_templates())
    if (t.file == "faulty.cu")
      detail::register_extra_family({"faulty", "faulty.cu", {{"m", "MODE", {0, 1}}}, valid, one_block,
                                     no_shared, any_alignment},
                                    t);
  return cli::run_tune_cli(argc, argv, std::cout, std::cerr, isatty(STDERR_FILENO) == 1);
}
