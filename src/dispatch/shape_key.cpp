#include "shape_key.hpp"

#include <string>

namespace tilemm::dispatch {

std::string class_of(const Problem& p) {
  return "a" + std::to_string(p.alignment) + (dense_leading_dimensions(p) ? "-dense" : "-strided");
}

std::string describe(const Problem& p) {
  // Highest is left out: its lines and lease keys read as they did before precision modes.
  const std::string precision =
      p.precision == Precision::highest ? "" : std::string(", ") + to_string(p.precision);
  return std::to_string(p.M) + "x" + std::to_string(p.N) + "x" + std::to_string(p.K) + " (" +
         class_of(p) + precision + ")";
}

}  // namespace tilemm::dispatch
