#include "kernel_sources.hpp"

#include <string_view>
#include <vector>

#include "fnv1a.hpp"
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

const std::string& templates_hash() {
  static const std::string hash = [] {
    std::string text;  // "file:sha256;" of each template
    for (const auto& t : embedded_templates())
      text.append(t.file).append(":").append(t.sha256).append(";");
    return fnv1a_hex(text);
  }();
  return hash;
}

}  // namespace tilemm::detail
