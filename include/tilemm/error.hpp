// tilemm's one exception type. Every failure of the library surfaces as tilemm::Error (or a
// subclass), never as exit() or a bare CUDA/NVRTC/SQLite code: what() names the failing call or
// argument and why it failed.
#pragma once

#include <stdexcept>
#include <string>

namespace tilemm {

enum class ErrorKind {
  invalid_argument,  // the caller passed something the API does not accept
  cuda,              // a CUDA runtime call failed
  nvrtc,             // NVRTC failed to compile a variant
  cache,             // SQLite or the JSON import/export failed
  no_device,         // no usable CUDA device
  internal,          // a broken invariant inside tilemm
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

// Bad input at the API; argument() names the offending parameter ("lda", "A", "M", ...).
class InvalidArgument : public Error {
 public:
  InvalidArgument(std::string argument, const std::string& why)
      : Error(ErrorKind::invalid_argument, "tilemm: invalid argument '" + argument + "': " + why),
        argument_(std::move(argument)) {}
  const std::string& argument() const noexcept { return argument_; }

 private:
  std::string argument_;
};

// A variant failed to compile; log() is NVRTC's full program log.
class CompileError : public Error {
 public:
  CompileError(std::string variant, std::string log, const std::string& what)
      : Error(ErrorKind::nvrtc, what), variant_(std::move(variant)), log_(std::move(log)) {}
  const std::string& variant() const noexcept { return variant_; }
  const std::string& log() const noexcept { return log_; }

 private:
  std::string variant_;
  std::string log_;
};

}  // namespace tilemm
