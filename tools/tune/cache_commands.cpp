#include "cache_commands.hpp"

#include <filesystem>
#include <fstream>
#include <optional>

#include "cache_trust.hpp"
#include "cli_common.hpp"
#include "exchange_file.hpp"
#include "json_entry.hpp"
#include "preloaded.hpp"
#include "provenance.hpp"
#include "row_split.hpp"
#include "store_open.hpp"
#include "text_table.hpp"
#include "tilemm/tilemm.hpp"
#include "tuning_json.hpp"

namespace tilemm::cli {
namespace {

// A row-split plan's parts are entries of their own (tuned as shapes when the plan was tuned):
// they are listed under the plan whose candidate they belong to, as "+ rows A-B, plan hH", not
// as shapes someone asked for.
struct PlanPart {
  std::size_t entry;         // index into the entries
  std::int64_t first, last;  // rows of the planned shape
  std::int64_t core_rows;    // the plan: rowsplit_h<core_rows>
};

std::vector<std::vector<PlanPart>> plan_parts(const std::vector<cache::StoredEntry>& entries) {
  std::vector<std::vector<PlanPart>> parts(entries.size());
  auto find = [&](const cache::StoredEntry& plan, std::int64_t m) -> std::optional<std::size_t> {
    std::optional<std::size_t> any;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const auto& e = entries[i];
      if (e.device_key != plan.device_key || e.problem_class != plan.problem_class ||
          e.precision != plan.precision || e.candidate_set != plan.candidate_set || e.M != m ||
          e.N != plan.N || e.K != plan.K)
        continue;
      if (e.source == plan.source) return i;  // parts tuned with the plan share its source
      if (!any) any = i;
    }
    return any;
  };
  for (std::size_t p = 0; p < entries.size(); ++p) {
    const auto& plan = entries[p];
    std::vector<std::int64_t> heights;  // the winning plan first, then the others tried
    if (const auto h = detail::parse_row_split(plan.winner)) heights.push_back(*h);
    for (const auto& c : plan.candidates)
      if (const auto h = detail::parse_row_split(c.variant); h && (heights.empty() || *h != heights[0]))
        heights.push_back(*h);
    for (const auto h : heights) {
      if (h <= 0 || h >= plan.M) continue;
      if (const auto core = find(plan, h)) parts[p].push_back({*core, 0, h - 1, h});
      if (const auto rest = find(plan, plan.M - h)) parts[p].push_back({*rest, h, plan.M - 1, h});
    }
  }
  return parts;
}

void print_entries(std::ostream& out, const std::vector<cache::StoredEntry>& entries) {
  const auto parts = plan_parts(entries);
  std::vector<bool> is_part(entries.size(), false);
  for (const auto& list : parts)
    for (const auto& part : list) is_part[part.entry] = true;
  using Align = TextTable::Align;
  TextTable table({{"device"}, {"shape"}, {"class"}, {"precision"}, {"candidates"}, {"winner"},
                   {"TFLOP/s", Align::right}, {"source"}, {"tuned at"}, {"state"}});
  auto add = [&](const cache::StoredEntry& e, const std::string& shape) {
    table.add_row({e.device_key, shape, e.problem_class, to_string(e.precision),
                   candidate_set_cell(e), e.winner,
                   fixed(e.tflops, 2),
                   e.source == "tuned" ? "tuned here" : e.source, e.tuned_at,
                   dispatch::is_fresh(e, dispatch::running_versions_here(e)) ? "fresh" : "stale"});
  };
  bool any_parts = false;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (is_part[i]) continue;
    const auto& e = entries[i];
    add(e, shape_text(e.M, e.N, e.K));
    for (const auto& part : parts[i]) {
      any_parts = true;
      const std::string rows = part.first == part.last
                                   ? "row " + std::to_string(part.first)
                                   : "rows " + std::to_string(part.first) + "-" + std::to_string(part.last);
      add(entries[part.entry], "  + " + rows + ", plan h" + std::to_string(part.core_rows));
    }
  }
  table.print(out);
  if (any_parts)
    out << "(+ rows A-B, plan hH: rows A to B of the shape above, a part of its row-split plan "
           "rowsplit_hH, tuned and stored as a shape of its own)\n";
}

}  // namespace

int list_command(const std::string& path, const std::string& device_key, std::ostream& out,
                 std::ostream& err) {
  std::vector<cache::StoredEntry> entries;
  std::optional<cache::CacheCorrupt> damaged;  // left in place: listing changes nothing
  if (std::filesystem::exists(path)) {
    try {
      cache::TuningStore store(path);
      entries = store.list(device_key);
      if (const cache::CacheTrust trust = cache::cache_trust(path); !trust.loads_stored_code)
        out << "shared cache: " << trust.reason << "; its results are used, but its stored kernels "
            << "are not loaded (each process compiles its own)\n";
    } catch (const cache::CacheCorrupt& e) {
      damaged = e;
    }
  } else {
    out << "no cache at " << path << " (nothing tuned yet)\n";
  }
  for (const auto& e : cache::preloaded_entries(detail::why_not_a_known_name))
    if (device_key.empty() || e.device_key == device_key) entries.push_back(e);
  print_entries(out, entries);
  out << entries.size() << " entries (" << path << " and the preloaded caches)\n";
  if (damaged) return damaged_cache(err, path, *damaged, "only the preloaded entries were listed");
  return kOk;
}

// Entry by entry (TuningStore::for_each into a JsonEntriesWriter), so that memory holds one entry
// however large the cache is.
int export_command(const std::string& path, const std::string& device_key, const std::string& file,
                   std::ostream& out, std::ostream& err) {
  std::optional<cache::TuningStore> store;
  try {
    if (std::filesystem::exists(path)) store.emplace(path);
  } catch (const cache::CacheCorrupt& e) {
    return damaged_cache(err, path, e, "nothing was exported");  // an earlier FILE stays as it was
  }
  ExportFile target(file, out);
  cache::JsonEntriesWriter writer(target.stream());
  try {
    if (store) store->for_each(device_key, [&](cache::StoredEntry&& e) { writer.add(e); });
  } catch (const cache::CacheCorrupt& e) {
    return damaged_cache(err, path, e, "nothing was exported");
  }
  writer.finish();
  if (target.to_stdout()) return kOk;
  target.commit();
  out << "exported " << writer.count() << " entries to " << file << "\n";
  return kOk;
}

// Two streaming passes, so that memory does not grow with the file: the first validates all of
// it, so that a bad file changes nothing (nor creates the cache); the second stores the entries
// as it reads them, in one transaction that a bad entry (the file changed meanwhile) rolls back.
int import_command(const std::string& path, const std::string& file, std::ostream& out,
                   std::ostream& err) {
  validate_import_file(file);
  cache::OpenedStore opened = cache::open_persistent_store(path);
  if (!opened.warning.empty()) warn(err, opened.warning);
  cache::TuningStore::Writer writer(*opened.store);
  const std::size_t count =
      read_import_file(file, [&](cache::StoredEntry&& e) { writer.put(e); });
  writer.commit();
  out << "imported " << count << " entries from " << file << " into " << path << "\n";
  return kOk;
}

int clear_command(const std::string& path, std::ostream& out, std::ostream& err) {
  if (!std::filesystem::exists(path)) {
    out << "no cache at " << path << "; nothing to clear\n";
    return kOk;
  }
  cache::OpenedStore opened = cache::open_persistent_store(path);  // a damaged file: moved aside
  if (!opened.warning.empty()) warn(err, opened.warning);
  cache::TuningStore& store = *opened.store;
  const auto entries = store.list();
  out << "removing " << entries.size() << " tuning entries and all cached CUBINs from " << path
      << "\n";
  store.clear();
  out << "cleared\n";
  return kOk;
}

}  // namespace tilemm::cli
