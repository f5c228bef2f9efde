#include "nvrtc_compiler.hpp"

#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <regex>

#include "family_registry.hpp"
#include "kernel_sources.hpp"
#include "log.hpp"
#include "tilemm/error.hpp"

namespace tilemm::detail {
namespace {

std::atomic<std::uint64_t> compile_count{0};

// Compilations running, and whether the process has stopped them (stop_nvrtc_compilations).
// Never destroyed: compiling threads may still use it while the process exits.
struct CompilationGate {
  std::mutex mutex;
  std::condition_variable idle;
  int running = 0;
  bool stopped = false;
};
CompilationGate& compilation_gate() {
  static auto* gate = new CompilationGate();
  return *gate;
}

// Counts one compilation as running while it lives; refuses to start once stopped.
class RunningCompilation {
 public:
  explicit RunningCompilation(const std::string& name) {
    CompilationGate& gate = compilation_gate();
    std::lock_guard<std::mutex> lock(gate.mutex);
    if (gate.stopped)
      throw CompileError(name, "", "tilemm: '" + name + "' was not compiled: the process is exiting");
    ++gate.running;
  }
  ~RunningCompilation() {
    CompilationGate& gate = compilation_gate();
    std::lock_guard<std::mutex> lock(gate.mutex);
    if (--gate.running == 0) gate.idle.notify_all();
  }
  RunningCompilation(const RunningCompilation&) = delete;
  RunningCompilation& operator=(const RunningCompilation&) = delete;
};

void check_nvrtc(nvrtcResult status, const char* call, const std::string& variant) {
  if (status != NVRTC_SUCCESS)
    throw Error(ErrorKind::nvrtc, std::string("tilemm: ") + call + " failed for variant '" +
                                      variant + "': " + nvrtcGetErrorString(status));
}

// Owns an nvrtcProgram.
class Program {
 public:
  Program(const std::string& source, const std::string& file, const std::string& variant)
      : variant_(variant) {
    check_nvrtc(nvrtcCreateProgram(&program_, source.c_str(), file.c_str(), 0, nullptr, nullptr),
                "nvrtcCreateProgram", variant_);
  }
  ~Program() { nvrtcDestroyProgram(&program_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  nvrtcResult compile(const std::vector<std::string>& options) {
    std::vector<const char*> argv;
    for (const auto& o : options) argv.push_back(o.c_str());
    return nvrtcCompileProgram(program_, static_cast<int>(argv.size()), argv.data());
  }

  std::string log() const {
    std::size_t size = 0;
    check_nvrtc(nvrtcGetProgramLogSize(program_, &size), "nvrtcGetProgramLogSize", variant_);
    std::string text(size, '\0');
    check_nvrtc(nvrtcGetProgramLog(program_, text.data()), "nvrtcGetProgramLog", variant_);
    while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
    return text;
  }

  std::vector<char> cubin() const {
    std::size_t size = 0;
    check_nvrtc(nvrtcGetCUBINSize(program_, &size), "nvrtcGetCUBINSize", variant_);
    std::vector<char> bytes(size);
    check_nvrtc(nvrtcGetCUBIN(program_, bytes.data()), "nvrtcGetCUBIN", variant_);
    return bytes;
  }

 private:
  nvrtcProgram program_ = nullptr;
  std::string variant_;
};

int first_match(const std::string& text, const std::regex& pattern) {
  std::smatch m;
  return std::regex_search(text, m, pattern) ? std::stoi(m[1].str()) : -1;
}

// ptxas -v reports each kernel of the module in turn: "Compiling entry function 'NAME'", then
// "N bytes stack frame, N bytes spill stores, N bytes spill loads" and "Used N registers". The
// registers and stack frame are those of the kernel called `out.name` (the first kernel's when
// none is: support modules); the spills are the most of any kernel, since a spill in a module's
// second kernel (split-K's reduce, padded's copy) slows the variant as much.
void read_ptxas_report(CompiledVariant& out) {
  // Never destroyed: a background tuning may compile until its worker is stopped at exit.
  static const auto& entry = *new std::regex(R"(Compiling entry function '([^']+)')");
  static const auto& registers = *new std::regex(R"(Used (\d+) registers)");
  static const auto& stack = *new std::regex(R"((\d+) bytes stack frame)");
  static const auto& stores = *new std::regex(R"((\d+) bytes spill stores)");
  static const auto& loads = *new std::regex(R"((\d+) bytes spill loads)");
  struct Section {
    std::string function, text;
  };
  std::vector<Section> sections;
  std::vector<std::size_t> starts;
  for (auto it = std::sregex_iterator(out.log.begin(), out.log.end(), entry);
       it != std::sregex_iterator(); ++it) {
    starts.push_back(static_cast<std::size_t>(it->position()));
    sections.push_back({(*it)[1].str(), {}});
  }
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const std::size_t end = i + 1 < starts.size() ? starts[i + 1] : out.log.size();
    sections[i].text = out.log.substr(starts[i], end - starts[i]);
  }
  if (sections.empty()) sections.push_back({out.name, out.log});  // no markers: one report
  const Section* main = &sections.front();
  for (const auto& s : sections)
    if (s.function == out.name) main = &s;
  out.registers = first_match(main->text, registers);
  out.stack_frame_bytes = first_match(main->text, stack);
  for (const auto& s : sections) {
    out.spill_store_bytes = std::max(out.spill_store_bytes, first_match(s.text, stores));
    out.spill_load_bytes = std::max(out.spill_load_bytes, first_match(s.text, loads));
  }
}

}  // namespace

CompiledVariant compile_template(const EmbeddedTemplate& tmpl, const std::string& name,
                                 const std::string& arch, std::vector<std::string> defines) {
  const RunningCompilation running(name);
  const auto start = std::chrono::steady_clock::now();
  CompiledVariant out;
  out.name = name;
  out.arch = arch;
  out.template_hash = std::string(tmpl.sha256);

  // An exact sm_XY target makes NVRTC emit CUBIN (not PTX), so loading never JIT-compiles.
  // No fast-math: the kernels promise IEEE FP32 arithmetic (FMA contraction allowed).
  std::vector<std::string> options = {"--gpu-architecture=" + arch, "-std=c++17",
                                      "--ptxas-options=-v"};
  for (auto& d : defines) options.push_back(std::move(d));

  Program program(std::string(tmpl.source), std::string(tmpl.file), out.name);
  const nvrtcResult status = program.compile(options);
  compile_count.fetch_add(1, std::memory_order_relaxed);
  out.log = program.log();
  if (status != NVRTC_SUCCESS)
    throw CompileError(out.name, out.log,
                       "tilemm: NVRTC could not compile '" + out.name + "' for " + arch + ": " +
                           nvrtcGetErrorString(status) + "\n" + out.log);
  out.cubin = program.cubin();
  read_ptxas_report(out);
  out.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

CompiledVariant compile_variant(const Variant& v, const std::string& arch) {
  CompiledVariant out = compile_template(template_of(v), variant_name(v),
                                         nvrtc_architecture(v, arch), compile_definitions(v));
  out.arch = arch;  // the key it is filed and looked up under: the device's, "sm_90" for sm_90a
  return out;
}

void warm_up_nvrtc(const std::string& arch) {
  static const EmbeddedTemplate empty{"tilemm_warm_up.cu",
                                      "extern \"C\" __global__ void tilemm_warm_up() {}\n", ""};
  compile_template(empty, "tilemm_warm_up", arch, {});
}

void stop_nvrtc_compilations() {
  CompilationGate& gate = compilation_gate();
  std::unique_lock<std::mutex> lock(gate.mutex);
  gate.stopped = true;
  if (gate.running == 0) return;
  // The exit waits for up to one compilation's time: said, so that it is not taken for a hang.
  const int running = gate.running;
  const auto start = std::chrono::steady_clock::now();
  log(LogLevel::info, "process exit: waiting for " + std::to_string(running) + " kernel " +
                          (running == 1 ? "compilation" : "compilations") +
                          " to end (NVRTC cannot be interrupted)");
  gate.idle.wait(lock, [&] { return gate.running == 0; });
  log(LogLevel::info, took("process exit: the compilations ended",
                           std::chrono::steady_clock::now() - start));
}

std::uint64_t nvrtc_compile_count() { return compile_count.load(std::memory_order_relaxed); }

}  // namespace tilemm::detail
