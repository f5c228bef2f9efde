// What the tuner's timings mean: which inputs the GPU bench feeds a problem's timed launches
// (rotated copies, L2-cold, or the same buffers every launch, L2-warm), decided from the
// problem's working set and the device's L2, and the version of that method which stored
// results carry (src/dispatch/provenance.hpp), so that a result timed another way is stale. Pure
// arithmetic: no CUDA call.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tilemm/variant.hpp"

namespace tilemm::tuner {

// Bump whenever what GpuBench's timings mean changes (which inputs, which launches count, how a
// winner is chosen from them): a stored result timed another way becomes stale and is re-tuned,
// so that a cache never ranks or keeps winners timed under two methods. A result carries the
// version of its problem's input mode (timing_method_version below), so that a change to how one
// mode's problems are timed stales only theirs: the shipped preloaded results of large shapes,
// timed rotated, stay fresh when the same-buffers method changes. History: 1, inputs always
// rotated; 2, the input mode below; 3, same buffers only: the finalists also timed on rotated
// copies and ranked by their slower mode; 4, same buffers only: ranked by how far each is behind
// cuBLAS's own call (else the best) in either mode (docs/tuning.md, "The rotated look at the
// finalists").
// kTimingMethodVersion is the newest, what tilemm-tune --version names.
constexpr int kRotatedTimingMethodVersion = 2;
constexpr int kSameBuffersTimingMethodVersion = 4;
constexpr int kTimingMethodVersion = 4;

enum class InputMode {
  // Consecutive launches use consecutive copies of A, B and C that together exceed the L2 several
  // times: operands come from HBM, as for a call on data no recent kernel touched.
  rotated,
  // Every launch uses the same A, B and C: operands come from the L2 the previous launch warmed,
  // as for a caller that reuses its buffers or consumes what the previous kernel just wrote.
  same_buffers,
};

// "rotated" or "same buffers", for log lines.
const char* input_mode_name(InputMode mode);

// Bytes of A, B and C that one call of `problem` reads or writes: M x K of A, K x N of B and
// M x N of C, in floats. The padding of a leading dimension beyond a row is not touched (to
// within a cache line at each row's end), so it does not count. Cost: a few multiplications.
std::uint64_t working_set_bytes(const Problem& problem);

// The mode a problem is timed in on a device with `l2_bytes` of L2 (0: unknown): same_buffers
// when its working set is at most half the L2, else rotated.
//
// Why the working set decides: a problem whose operands fit in the L2 runs from the L2 whenever
// its caller reuses buffers, and kernels rank differently there (a split of K that pays for its
// extra reads from HBM may not pay from the L2); one much larger than the L2 streams from HBM
// however it is called, and rotating is then the only honest measurement. Why half: the L2 is
// not one LRU pool holding only this call's data (it is split in partitions, with a replacement
// policy and other traffic of its own), so a working set near its full size is already partly
// evicted between calls; at half, a repeated call finds nearly all of it resident. An unknown L2
// (0) never holds the working set. Cost: a few multiplications.
InputMode input_mode(const Problem& problem, std::uint64_t l2_bytes);

// The timing method version of a result timed in `mode` (kRotatedTimingMethodVersion or
// kSameBuffersTimingMethodVersion).
int timing_method_version(InputMode mode);

// How many sets of (A, B, C), each as large as the problem's leading dimensions make it, GpuBench
// allocates for `problem`: 1 when input_mode() is same_buffers; rotated, enough that rotating
// through them exceeds the L2 several times, within a cap on the memory they take (at least 1).
std::size_t input_set_count(const Problem& problem, std::uint64_t l2_bytes);

// How many sets rotated timings of `problem` go through, whatever its input mode: what
// input_set_count() answers for a rotated problem, and what GpuBench allocates when a
// same-buffers problem's finalists are timed rotated too (at most 2 GiB of sets, at least 1).
std::size_t rotated_set_count(const Problem& problem, std::uint64_t l2_bytes);

}  // namespace tilemm::tuner
