#include "kernel_sources.hpp"

#include <cstdint>
#include <cstdio>
#include <vector>
#include <map>

#include "family.hpp"
#include "family_registry.hpp"
#include "tilemm/error.hpp"
#include "tilemm/variant.hpp"

namespace tilemm::detail {

namespace {
std::vector<EmbeddedTemplate>& extra_templates() {
  static std::vector<EmbeddedTemplate> extra;
  return extra;
}
}  // namespace

void register_extra_template(const EmbeddedTemplate& source) { extra_templates().push_back(source); }

const EmbeddedTemplate& find_template(std::string_view file) {
  for (const auto& t : embedded_templates())
    if (t.file == file) return t;
  for (const auto& t : extra_templates())
    if (t.file == file) return t;
  throw Error(ErrorKind::internal,
              "tilemm: kernel template '" + std::string(file) + "' is not embedded in this build");
}

namespace {

std::string hash_of(const std::vector<const EmbeddedTemplate*>& templates) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over "file:sha256;" of each template
  for (const EmbeddedTemplate* t : templates) {
    for (std::string_view part : {t->file, std::string_view(":"), t->sha256, std::string_view(";")})
      for (char c : part) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return std::string(text);
}

// Whether a tuning at `precision` may choose a kernel of a family with this template: one of
// that precision, or an FP32 (highest) one, which serves every precision.
bool chosen_among(const EmbeddedTemplate& t, Precision precision) {
  for (const Family& f : families()) {
    if (f.template_file != t.file) continue;
    for (const Variant& v : variant_space(f.name)) {
      const Precision p = f.precision(v);
      if (p == precision || p == Precision::highest) return true;
    }
  }
  return false;
}

}  // namespace

const std::string& templates_hash() {
  static const std::string hash = [] {
    std::vector<const EmbeddedTemplate*> all;
    for (const auto& t : embedded_templates()) all.push_back(&t);
    return hash_of(all);
  }();
  return hash;
}

const std::string& templates_hash(Precision precision) {
  static const auto& hashes = *new std::map<Precision, std::string>([] {
    std::map<Precision, std::string> out;
    for (const Precision p : {Precision::highest, Precision::high, Precision::medium}) {
      std::vector<const EmbeddedTemplate*> chosen;
      for (const auto& t : embedded_templates())
        if (chosen_among(t, p)) chosen.push_back(&t);
      out[p] = hash_of(chosen);
    }
    return out;
  }());
  return hashes.at(precision);
}

}  // namespace tilemm::detail
