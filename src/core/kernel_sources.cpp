#include "kernel_sources.hpp"

#include <cstdint>
#include <cstdio>
#include <string_view>
#include <vector>

#include "tilemm/error.hpp"

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

}  // namespace

const std::string& templates_hash() {
  static const std::string hash = [] {
    std::vector<const EmbeddedTemplate*> all;
    for (const auto& t : embedded_templates()) all.push_back(&t);
    return hash_of(all);
  }();
  return hash;
}

}  // namespace tilemm::detail
