// What the Python package needs for arrays that are neither torch tensors nor CuPy arrays (JAX and
// any other DLPack producer): reading a DLPack capsule, device memory for a result, and ordering
// one stream after another.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/vector.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "device_guard.hpp"
#include "tilemm/error.hpp"

namespace nb = nanobind;

namespace tilemm::python {
namespace {

// (data pointer, shape, strides in elements, device type, device id, dtype code, bits, lanes) of a
// DLPack capsule or producer. Nothing is copied; the caller keeps the producer alive.
nb::tuple dlpack_view(nb::ndarray<nb::ro> array) {
  std::vector<std::int64_t> shape, strides;
  for (std::size_t i = 0; i < array.ndim(); ++i) {
    shape.push_back(static_cast<std::int64_t>(array.shape(i)));
    strides.push_back(array.stride(i));
  }
  const nb::dlpack::dtype dtype = array.dtype();
  return nb::make_tuple(reinterpret_cast<std::uintptr_t>(array.data()), shape, strides,
                        array.device_type(), array.device_id(), dtype.code, dtype.bits,
                        dtype.lanes);
}

// (pointer, DLPack capsule) of an uninitialized C-contiguous float32 array of `shape` on CUDA
// device `device`, freed (with cudaFree, which waits for the device) when the consumer that takes
// the capsule lets go of it. The pointer is returned beside it because a capsule can be consumed
// only once, and the consumer is the library the result is handed to.
nb::tuple empty(const std::vector<std::int64_t>& shape, int device) {
  std::size_t count = 1;
  std::vector<std::size_t> dims;
  for (std::int64_t d : shape) {
    if (d < 0) throw InvalidArgument("shape", "has a negative dimension");
    dims.push_back(static_cast<std::size_t>(d));
    count *= static_cast<std::size_t>(d);
  }
  const DeviceGuard on(device);
  void* data = nullptr;
  check_cuda(cudaMalloc(&data, count == 0 ? 1 : count * sizeof(float)), "cudaMalloc");
  nb::capsule owner(data, [](void* p) noexcept { (void)cudaFree(p); });
  nb::ndarray<float, nb::device::cuda> array(data, dims.size(), dims.data(), owner, nullptr,
                                             nb::dtype<float>(), nb::device::cuda::value, device);
  return nb::make_tuple(reinterpret_cast<std::uintptr_t>(data), nb::cast(array));
}

// Work queued on `consumer` after this call runs after the work queued on `producer` so far.
void stream_wait(std::uintptr_t consumer, std::uintptr_t producer, int device) {
  const DeviceGuard on(device);
  cudaEvent_t event = nullptr;
  check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  const cudaError_t recorded = cudaEventRecord(event, reinterpret_cast<cudaStream_t>(producer));
  const cudaError_t waited =
      recorded == cudaSuccess
          ? cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(consumer), event, 0)
          : recorded;
  (void)cudaEventDestroy(event);  // the wait keeps what it needs of the event
  check_cuda(recorded, "cudaEventRecord");
  check_cuda(waited, "cudaStreamWaitEvent");
}

void synchronize(std::uintptr_t stream, int device) {
  const DeviceGuard on(device);
  nb::gil_scoped_release released;
  check_cuda(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
}

}  // namespace

void bind_arrays(nb::module_& m) {
  m.def("dlpack_view", &dlpack_view, nb::arg("array"),
        "(pointer, shape, strides, device_type, device_id, dtype_code, bits, lanes) of a DLPack "
        "capsule or producer, without copying.");
  m.def("empty", &empty, nb::arg("shape"), nb::arg("device"),
        "(pointer, DLPack capsule) of an uninitialized float32 CUDA array of `shape` on `device`.");
  m.def("stream_wait", &stream_wait, nb::arg("consumer"), nb::arg("producer"), nb::arg("device"),
        "Orders the work queued on `consumer` after the work queued on `producer` so far.");
  m.def("synchronize", &synchronize, nb::arg("stream"), nb::arg("device"),
        "Waits for the work queued on `stream`.");
}

}  // namespace tilemm::python
