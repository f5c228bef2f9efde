#include "python_errors.hpp"

#include <exception>

#include "tilemm/error.hpp"

namespace nb = nanobind;

namespace tilemm::python {
namespace {

// Module state that lives as long as the interpreter: the exception types are created once, at
// import, and never freed (a translator may run until the interpreter ends).
PyObject* error_type = nullptr;
PyObject* invalid_argument_type = nullptr;

PyObject* new_exception(const char* name, const char* doc, PyObject* bases) {
  PyObject* type = PyErr_NewExceptionWithDoc(name, doc, bases, nullptr);
  if (type == nullptr) throw nb::python_error();
  return type;
}

}  // namespace

void register_exceptions(nb::module_& m) {
  error_type = new_exception(
      "tilemm.Error",
      "A failure of tilemm: CUDA, NVRTC or the tuning cache. The message names the failing call.",
      PyExc_RuntimeError);
  nb::object bases = nb::make_tuple(nb::handle(error_type), nb::handle(PyExc_ValueError));
  invalid_argument_type = new_exception(
      "tilemm.InvalidArgument",
      "An argument tilemm does not accept (dtype, device, shape, ...); the message names it.",
      bases.ptr());
  m.attr("Error") = nb::handle(error_type);
  m.attr("InvalidArgument") = nb::handle(invalid_argument_type);

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const InvalidArgument& e) {
      PyErr_SetString(invalid_argument_type, e.what());
    } catch (const Error& e) {
      PyErr_SetString(error_type, e.what());
    }
  });
}

}  // namespace tilemm::python
