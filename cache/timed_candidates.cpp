#include "timed_candidates.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace tilemm::cache {

std::string with_timed_candidates_only(std::string_view document) {
  using json = nlohmann::json;
  json root = json::parse(document.begin(), document.end());
  if (!root.is_object() || !root.contains("entries") || !root["entries"].is_array())
    throw std::runtime_error("not a tuning document: no \"entries\" array at its root");
  for (json& entry : root["entries"]) {
    if (!entry.is_object() || !entry.contains("candidates")) continue;
    json& candidates = entry["candidates"];
    if (!candidates.is_array()) continue;
    const json* winner = entry.contains("winner") ? &entry["winner"] : nullptr;
    json kept = json::array();
    for (json& c : candidates) {
      const bool timed = c.is_object() && c.contains("samples") && c["samples"].is_number() &&
                         c["samples"].get<double>() > 0;
      const bool is_winner = winner != nullptr && c.is_object() && c.contains("variant") &&
                             c["variant"] == *winner;
      if (timed || is_winner) kept.push_back(std::move(c));
    }
    candidates = std::move(kept);
  }
  return root.dump();
}

}  // namespace tilemm::cache
