#include "kernel_sources.hpp"

#include "tilemm/error.hpp"

namespace tilemm::detail {

const EmbeddedTemplate& find_template(std::string_view file) {
  for (const auto& t : embedded_templates())
    if (t.file == file) return t;
  throw Error(ErrorKind::internal,
              "tilemm: kernel template '" + std::string(file) + "' is not embedded in this build");
}

}  // namespace tilemm::detail
