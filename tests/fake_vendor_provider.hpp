// A fake vendor candidate provider for CPU tests: its candidates are names it is given, it runs
// nothing (an enqueue is counted), and it can be told that one of them is unavailable here.
#pragma once

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "candidate_provider.hpp"
#include "no_wait.hpp"

namespace tilemm::testing {

class FakePrepared : public detail::PreparedCandidate {
 public:
  void enqueue(const GemmArgs&, cudaStream_t) const override { ++enqueued; }
  mutable int enqueued = 0;
};

// The candidates `names` ("fakevendor_a1" and "fakevendor_a2" unless a test lists more), for
// every problem.
class FakeVendorProvider : public detail::CandidateProvider {
 public:
  FakeVendorProvider() = default;
  // A fake with another prefix, whose candidates are `prefix`_a1 and `prefix`_a2.
  explicit FakeVendorProvider(std::string prefix)
      : names{prefix + "_a1", prefix + "_a2"}, prefix_(std::move(prefix)) {}
  std::string prefix() const override { return prefix_; }
  bool vendor() const override { return true; }
  bool reference() const override { return is_reference; }
  bool available() override {
    load();
    ++availability_asked;
    return present;
  }
  std::string why_not_a_name(const std::string& name) const override {
    return std::find(names.begin(), names.end(), name) != names.end() ? "" : "unknown fake algorithm";
  }
  std::vector<std::string> candidates(const DeviceInfo&, const Problem&) override {
    ++listed;
    return names;
  }
  std::string why_cannot_run(const std::string& name, const DeviceInfo&, const Problem&) override {
    load();
    return name == unavailable ? "not in this fake library" : "";
  }
  const detail::PreparedCandidate& prepare(const std::string&, const DeviceInfo&) override {
    load();
    return prepared;
  }
  std::vector<std::string> names{"fakevendor_a1", "fakevendor_a2"};
  bool present = true;  // available(): false stands for a vendor library missing here
  bool is_reference = false;  // reference(): true stands for cuBLAS's cublasSgemm
  int availability_asked = 0;
  int listed = 0;
  std::string unavailable;
  FakePrepared prepared;
  // True stands for a library still to load, as cuBLASLt is at the start of a process: until a
  // thread that may wait has asked for it (and so loaded it), the calls that would load it refuse
  // a thread that must not wait (no_wait.hpp).
  bool must_load = false;
  std::atomic<bool> loaded{false};
  std::thread::id loaded_by;  // the thread that loaded it

 private:
  void load() {
    if (!must_load || loaded) return;
    detail::refuse_wait("the fake vendor library to load");
    loaded_by = std::this_thread::get_id();
    loaded = true;
  }
  std::string prefix_ = "fakevendor";
};

}  // namespace tilemm::testing
