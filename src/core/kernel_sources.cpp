#include "kernel_sources.hpp"

#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string_view>
#include <vector>

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

// The precisions the kernels of each template file compute at, over its families.
std::map<std::string_view, std::set<Precision>> precisions_by_template() {
  std::map<std::string_view, std::set<Precision>> out;
  for (const Family& f : families()) {
    std::set<Precision>& offered = out[f.template_file];
    // Every variant of an FP32 family computes at highest: no need to list its space, which
    // would cost the first cache lookup of a process a millisecond.
    if (f.precision == computes_fp32) {
      offered.insert(Precision::highest);
      continue;
    }
    for (const Variant& v : variant_space(f.name)) offered.insert(f.precision(v));
  }
  return out;
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
    const auto offered = precisions_by_template();
    std::map<Precision, std::string> out;
    for (const Precision p : {Precision::highest, Precision::high, Precision::medium}) {
      // A tuning at p chooses among p's kernels and the FP32 (highest) ones, which serve it too.
      std::vector<const EmbeddedTemplate*> chosen;
      for (const auto& t : embedded_templates()) {
        const auto it = offered.find(t.file);
        if (it != offered.end() && (it->second.count(p) || it->second.count(Precision::highest)))
          chosen.push_back(&t);
      }
      out[p] = hash_of(chosen);
    }
    return out;
  }());
  return hashes.at(precision);
}

}  // namespace tilemm::detail
