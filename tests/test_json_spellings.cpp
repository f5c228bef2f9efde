// The hand-written spelling checks of JSON entries accept exactly what the patterns they stand for
// match: each is compared with std::regex on chosen edge cases and on random text.
#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>
#include <vector>

#include "json_spellings.hpp"

namespace tilemm::cache {
namespace {

struct Spelling {
  const char* name;
  bool (*check)(const std::string&);
  const char* pattern;
  std::vector<std::string> pieces;  // random text is made of these
  std::string sample;               // a valid spelling, which random edits change
};

std::vector<Spelling> spellings() {
  return {
      {"device key", is_device_key_spelling,
       R"([ -{}~]{1,255}\|sm_[0-9]{2,3}\|[0-9]{1,5}sm\|[0-9]{1,9}MiB)",
       {"NVIDIA H200", "|", "sm_", "9", "0", "100", "sm", "MiB", "x", " ", "|sm_90|", "132sm|",
        "143771MiB", "\x1b[31m", "\n", "\r", "\t", std::string(1, '\0'), "\x7f", "\xc3\xa9"},
       "NVIDIA H200|sm_90|132sm|143771MiB"},
      {"arch", is_arch_spelling, R"(sm_[0-9]{2,3})", {"sm_", "s", "m", "_", "9", "0", "1", "a"}, "sm_90"},
      {"problem class", is_problem_class_spelling, R"(a[124]-(dense|strided))",
       {"a", "1", "2", "3", "4", "-", "dense", "strided", "d", "x"}, "a4-dense"},
      {"UTC time", is_utc_time_spelling,
       R"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)",
       {"2026", "-", "12", "04", "T", ":", "5", "Z", "z", " "}, "2026-12-04T21:31:29Z"},
      {"version", is_version_spelling, R"([0-9A-Za-z.+-]{1,64})",
       {"0", ".", "1", "+", "-", "rc", "Z", " ", "_", "/", "0.1.0"}, "0.1.0"},
      {"template hash", is_template_hash_spelling, R"([0-9a-f]{16})",
       {"0", "9", "a", "f", "g", "A", "0123456789abcdef", "01234567"}, "0123456789abcdef"},
      {"entry source", is_entry_source_spelling, R"(tuned|imported|preloaded)",
       {"tuned", "imported", "preloaded", "d", "pre", "loaded", " "}, "preloaded"},
      {"variant", is_variant_spelling, R"([a-z][a-z0-9_]{0,127})",
       {"a", "z", "0", "9", "_", "A", "-", "tiled_t32_p0", "warptile", " "}, "tiled_t32_p0"},
  };
}

TEST(JsonSpellings, EdgeCasesAgreeWithThePatterns) {
  const std::vector<std::string> edges = {
      "", "|", "a|sm_90|1sm|1MiB", "|sm_90|1sm|1MiB", std::string(255, 'n') + "|sm_90|1sm|1MiB",
      std::string(256, 'n') + "|sm_90|1sm|1MiB", "a|sm_9|1sm|1MiB", "a|sm_1000|1sm|1MiB",
      "a|sm_90|123456sm|1MiB", "a|sm_90|sm|1MiB", "a|sm_90|1sm|1234567890MiB", "a|sm_90|1sm|MiB",
      "a|sm_90|1sm|1MiB|", "a\nb|sm_90|1sm|1MiB", "a\x1b[0m|sm_90|1sm|1MiB", "a~ {}|sm_90|1sm|1MiB", "sm_90", "sm_9", "sm_900", "sm_9000", "sm_", "a4-dense",
      "a3-dense", "a1-strided", "a4-", "a4-densee", "2026-12-04T21:31:29Z", "2026-12-04T21:31:29",
      "2026-12-04 21:31:29Z", std::string(64, '1'), std::string(65, '1'), "0123456789abcdef",
      "0123456789abcdeF", "0123456789abcde", "tuned", "tunedx", "a", "a_", std::string(128, 'a'),
      std::string(129, 'a'), "_a", "9a"};
  for (const auto& s : spellings()) {
    const std::regex pattern(s.pattern);
    for (const auto& text : edges)
      EXPECT_EQ(s.check(text), std::regex_match(text, pattern)) << s.name << ": \"" << text << "\"";
  }
}

TEST(JsonSpellings, RandomTextAgreesWithThePatterns) {
  std::mt19937 rng(20261204);
  for (const auto& s : spellings()) {
    const std::regex pattern(s.pattern);
    std::uniform_int_distribution<std::size_t> piece(0, s.pieces.size() - 1);
    std::uniform_int_distribution<int> length(0, 12);
    int accepted = 0;
    const std::string alphabet = "09afgzAZ_-.+:|T sm";
    std::uniform_int_distribution<std::size_t> letter(0, alphabet.size() - 1);
    for (int i = 0; i < 20000; ++i) {
      std::string text;
      if (i % 2 == 0) {
        for (int n = length(rng); n > 0; --n) text += s.pieces[piece(rng)];
      } else {  // the sample with up to two characters replaced, inserted or removed
        text = s.sample;
        for (int edits = static_cast<int>(rng() % 3); edits > 0 && !text.empty(); --edits) {
          const std::size_t at = rng() % text.size();
          switch (rng() % 3) {
            case 0: text[at] = alphabet[letter(rng)]; break;
            case 1: text.insert(at, 1, alphabet[letter(rng)]); break;
            default: text.erase(at, 1);
          }
        }
      }
      const bool expected = std::regex_match(text, pattern);
      accepted += expected;
      ASSERT_EQ(s.check(text), expected) << s.name << ": \"" << text << "\"";
    }
    EXPECT_GT(accepted, 0) << s.name << ": the random texts never matched; the test tests little";
  }
}

}  // namespace
}  // namespace tilemm::cache
