// The kernel templates of kernel_templates/, embedded at build time by
// cmake/embed_templates.cmake (generated file: build/.../embedded_templates.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>


namespace tilemm::detail {

struct EmbeddedTemplate {
  std::string_view file;    // "tiled.cu"
  std::string_view source;  // the file's bytes
  std::string_view sha256;  // hex digest of the file: part of every cache key of its kernels
};

const std::vector<EmbeddedTemplate>& embedded_templates();
// Support kernels (kernel_templates/support/*.cu): not GEMM families, not in templates_hash().
const std::vector<EmbeddedTemplate>& embedded_support_kernels();
// The preloaded tuning caches (cache/preloaded/*.json), embedded the same way.
const std::vector<EmbeddedTemplate>& embedded_preloaded();
// The same files without their candidate tables (cache/candidate_tables.hpp), under the same
// names: the preloaded entries' headers.
const std::vector<EmbeddedTemplate>& embedded_preloaded_headers();
// The same files cut to their timed candidates (cache/timed_candidates.hpp), under the same names:
// what the tuning history reads.
const std::vector<EmbeddedTemplate>& embedded_preloaded_timed();
// Where each entry stands in those files (cache/candidate_tables.hpp, entry_spans), "<offset>
// <length>" a line, under the same names.
const std::vector<EmbeddedTemplate>& embedded_preloaded_entry_spans();

// Makes find_template() find `source` too (see register_extra_family). Keeps the pointers.
void register_extra_template(const EmbeddedTemplate& source);

// The template called `file` (embedded or registered); throws tilemm::Error (internal) if it was not embedded.
const EmbeddedTemplate& find_template(std::string_view file);

// One hash over every embedded template (16 hex digits): what this build's kernels are, as
// tilemm-tune --version names them. A stored result is versioned by the families that can run its
// problem alone (family_fingerprint.hpp), not by this.
const std::string& templates_hash();

}  // namespace tilemm::detail
