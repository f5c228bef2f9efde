// The spellings a JSON entry's text fields must have (json_entry.cpp), checked by hand: the
// std::regex forms cost milliseconds to build and microseconds per match, and every process reads
// the preloaded results on its first lookup.
#pragma once

#include <string>

namespace tilemm::cache {

// "name|sm_XY|<SMs>sm|<memory>MiB": a name of 1-255 characters without '|', an architecture,
// 1-5 digits then "sm", 1-9 digits then "MiB".
bool is_device_key_spelling(const std::string& s);
// "sm_" and 2-3 digits.
bool is_arch_spelling(const std::string& s);
// "a1", "a2" or "a4", then "-dense" or "-strided".
bool is_problem_class_spelling(const std::string& s);
// "YYYY-MM-DDThh:mm:ssZ", digits where the letters are.
bool is_utc_time_spelling(const std::string& s);
// 1-64 of [0-9A-Za-z.+-].
bool is_version_spelling(const std::string& s);
// 16 lowercase hex digits.
bool is_template_hash_spelling(const std::string& s);
// "tuned", "imported" or "preloaded".
bool is_entry_source_spelling(const std::string& s);
// [a-z][a-z0-9_]{0,127}.
bool is_variant_spelling(const std::string& s);

}  // namespace tilemm::cache
