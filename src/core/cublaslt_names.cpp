#include "cublaslt_names.hpp"

#include <array>
#include <optional>
#include <utility>

#include "text_fields.hpp"

namespace tilemm::detail {
namespace {

// The fields in name order, each with its key.
std::array<std::pair<const char*, std::int64_t CublasLtConfig::*>, 10> numeric_fields() {
  return {{{"v", &CublasLtConfig::version},
           {"a", &CublasLtConfig::algo},
           {"t", &CublasLtConfig::tile},
           {"s", &CublasLtConfig::stages},
           {"k", &CublasLtConfig::split_k},
           {"r", &CublasLtConfig::reduction},
           {"w", &CublasLtConfig::swizzle},
           {"c", &CublasLtConfig::custom},
           {"i", &CublasLtConfig::inner},
           {"l", &CublasLtConfig::cluster}}};
}

}  // namespace

bool CublasLtConfig::operator==(const CublasLtConfig& o) const {
  return version == o.version && compute == o.compute && algo == o.algo && tile == o.tile &&
         stages == o.stages && split_k == o.split_k && reduction == o.reduction &&
         swizzle == o.swizzle && custom == o.custom && inner == o.inner && cluster == o.cluster;
}

std::string cublaslt_name(const CublasLtConfig& c) {
  std::string name = kCublasLtPrefix;
  const auto fields = numeric_fields();
  name += std::string("_v") + std::to_string(c.version) + "_m" + std::to_string(c.compute);
  for (std::size_t i = 1; i < fields.size(); ++i) {
    const std::int64_t value = c.*(fields[i].second);
    name += std::string("_") + fields[i].first + (value < 0 ? "n" : "") +
            std::to_string(value < 0 ? -value : value);
  }
  return name;
}

std::optional<CublasLtConfig> parse_cublaslt_name(const std::string& name, std::string& why) {
  const auto parts = split(name, '_');
  const auto fields = numeric_fields();
  if (parts.size() != fields.size() + 2 || parts[0] != kCublasLtPrefix) {
    why = "'" + name + "' is not cublaslt_v<n>_m<n>_a<n>_t<n>_s<n>_k<n>_r<n>_w<n>_c<n>_i<n>_l<n>";
    return std::nullopt;
  }
  CublasLtConfig c;
  // parts[1] is v, parts[2] is m, parts[3...] the other fields.
  for (std::size_t p = 1; p < parts.size(); ++p) {
    const char* key = p == 2 ? "m" : fields[p == 1 ? 0 : p - 2].first;
    const std::string& part = parts[p];
    // The configuration fields are cuBLASLt's own integers, which may be negative (a split of K of
    // -1, spelled "kn1": names hold only [a-z0-9_]); the version and the compute type are not.
    const bool negative = p > 2 && part.size() > 2 && part[1] == 'n';
    auto value = part.size() > 1 && part[0] == key[0]
                     ? parse_canonical_decimal(std::string_view(part).substr(negative ? 2 : 1), 9)
                     : std::nullopt;
    if (negative && value) value = *value == 0 ? std::nullopt : std::optional(-*value);  // no "-0"
    if (!value) {
      why = "'" + name + "': part " + std::to_string(p) + " must be '" + key +
            "<number>', got '" + part + "'";
      return std::nullopt;
    }
    if (p == 2) {
      if (*value > 1) {
        why = "'" + name + "': compute type m" + std::to_string(*value) + " is not 0 or 1";
        return std::nullopt;
      }
      c.compute = static_cast<int>(*value);
    } else {
      c.*(fields[p == 1 ? 0 : p - 2].second) = *value;
    }
  }
  return c;
}

Precision cublaslt_precision(const CublasLtConfig& config) {
  return config.compute == 0 ? Precision::highest : Precision::medium;
}

}  // namespace tilemm::detail
