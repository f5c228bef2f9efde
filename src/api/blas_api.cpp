// Layouts, transposes and batches, reduced to row-major non-transposed problems that a context's
// gemm() dispatches (Context's BLAS-style members; the free functions are the default context's).
#include <algorithm>
#include <optional>
#include <string>

#include "dimension_check.hpp"
#include "family_registry.hpp"
#include "launch.hpp"
#include "layout_reduction.hpp"
#include "option_check.hpp"
#include "stream_check.hpp"
#include "support_kernels.hpp"
#include "tilemm/blas.hpp"
#include "tilemm/context.hpp"
#include "tilemm/error.hpp"

namespace tilemm {
namespace {

// One row-major operand as stored: `rows` x `cols` with leading dimension `ld`.
struct Stored {
  const float* data;
  std::int64_t rows, cols, ld;
};

// `ld` of an operand whose storage, viewed row-major for the call's layout and op, is `stored`:
// at least its row length, and within reach; checked on the caller's name before any swap or copy.
void check_ld(const char* name, std::int64_t ld, const detail::RowMajorView& stored,
              const std::string& matrix) {
  const std::int64_t minimum = std::max<std::int64_t>(1, stored.cols);
  if (ld < minimum)
    throw InvalidArgument(name, "must be >= " + std::to_string(minimum) + " (the stored length of " +
                                    matrix + "'s rows or columns for this layout and op), got " +
                                    std::to_string(ld));
  detail::check_reach(name, ld, stored.rows, matrix + " as stored");
}

// The leading dimension of row_major_copy's copy of `stored`: its rows padded to 4 floats, so
// that the float4 kernels stay eligible.
std::int64_t copy_ld(const Stored& stored) { return detail::aligned_ld(stored.rows); }

// The row-major copy of an operand stored transposed (`stored` is cols x rows of the logical
// rows x cols operand), at copy_ld. The copy lives in `memory` until the caller releases it, once
// the GEMM that reads it is enqueued.
Stored row_major_copy(const DeviceInfo& device, const Stored& stored,
                      std::optional<detail::StreamWorkspace>& memory, cudaStream_t stream) {
  const std::int64_t rows = stored.cols, cols = stored.rows;
  const std::int64_t ld = copy_ld(stored);
  memory.emplace(static_cast<std::size_t>(rows * ld) * sizeof(float), device.ordinal, stream);
  detail::transpose(device, stored.rows, stored.cols, stored.data, stored.ld, memory->floats(), ld,
                    stream);
  return {memory->floats(), rows, cols, ld};
}

struct Normalized {
  detail::RowMajorReduction reduction;  // what the call is as a row-major problem
  Stored a, b;                          // A' and B' as stored (maybe transposed)
};

Stored stored_operand(const detail::ReducedOperand& operand, const float* A, std::int64_t lda,
                      const float* B, std::int64_t ldb) {
  const bool is_a = operand.source == detail::CallerOperand::a;
  return {is_a ? A : B, operand.stored.rows, operand.stored.cols, is_a ? lda : ldb};
}

// Validates a call and reduces it to a row-major problem with possibly transposed operands.
Normalized normalize(Layout layout, Op op_a, Op op_b, std::int64_t M, std::int64_t N,
                     std::int64_t K, const float* A, std::int64_t lda, const float* B,
                     std::int64_t ldb, std::int64_t ldc) {
  if (layout != Layout::row_major && layout != Layout::column_major)
    throw InvalidArgument("layout", "must be row_major or column_major");
  if ((op_a != Op::none && op_a != Op::transpose) || (op_b != Op::none && op_b != Op::transpose))
    throw InvalidArgument(op_a != Op::none && op_a != Op::transpose ? "op_a" : "op_b",
                          "must be none or transpose");
  // Checked on the caller's names, before a column-major call swaps M and N.
  detail::check_dimension("M", M);
  detail::check_dimension("N", N);
  detail::check_dimension("K", K);
  check_ld("lda", lda, detail::stored_view(layout, op_a, M, K), "A");
  check_ld("ldb", ldb, detail::stored_view(layout, op_b, K, N), "B");
  check_ld("ldc", ldc, detail::stored_view(layout, Op::none, M, N), "C");
  const detail::RowMajorReduction r = detail::reduce_to_row_major(layout, op_a, op_b, M, N, K);
  return {r, stored_operand(r.a, A, lda, B, ldb), stored_operand(r.b, A, lda, B, ldb)};
}

// What gemm(GemmArgs) would reject, checked before any transpose is launched.
void check_before_launch(const Normalized& p, const float* C) {
  const detail::RowMajorReduction& r = p.reduction;
  if (r.M > 0 && r.N > 0) {
    if (C == nullptr) throw InvalidArgument("C", "is null but M and N are nonzero");
    if (r.K > 0 && (p.a.data == nullptr || p.b.data == nullptr)) {
      // Name the caller's argument: after a column-major swap, A' holds B.
      const detail::ReducedOperand& null_one = p.a.data == nullptr ? r.a : r.b;
      throw InvalidArgument(null_one.source == detail::CallerOperand::a ? "A" : "B",
                            "is null but M, N and K are nonzero");
    }
  }
}

// The row-major GEMM that run_one enqueues for `p`: with an empty problem A and B are not read;
// a transposed operand is read from its copy, which the pool places aligned, at copy_ld (at
// `a_copy` / `b_copy`, or an aligned stand-in where the copy is not made yet).
GemmArgs planned_gemm(const Normalized& p, float alpha, float beta, float* C, std::int64_t ldc,
                      const float* a_copy = nullptr, const float* b_copy = nullptr) {
  alignas(16) static const float aligned[4] = {};
  const detail::RowMajorReduction& r = p.reduction;
  GemmArgs args;
  args.M = r.M;
  args.N = r.N;
  args.K = r.K;
  args.alpha = alpha;
  args.beta = beta;
  args.C = C;
  args.ldc = ldc;
  args.A = p.a.data;
  args.lda = p.a.ld;
  args.B = p.b.data;
  args.ldb = p.b.ld;
  if (r.M == 0 || r.N == 0 || r.K == 0) {
    // Nothing reads A or B: M or N == 0 is a no-op, K == 0 is C = beta C. Their leading
    // dimensions were checked against their own storage; a transposed operand's would fail the
    // row-major check of A' and B', which it is not stored as.
    args.A = args.B = nullptr;
    args.lda = std::max<std::int64_t>(1, r.K);
    args.ldb = std::max<std::int64_t>(1, r.N);
    return args;
  }
  if (r.a.copy_transposed) {
    args.A = a_copy != nullptr ? a_copy : aligned;
    args.lda = copy_ld(p.a);
  }
  if (r.b.copy_transposed) {
    args.B = b_copy != nullptr ? b_copy : aligned;
    args.ldb = copy_ld(p.b);
  }
  return args;
}

bool copies_operands(const Normalized& p) {
  const detail::RowMajorReduction& r = p.reduction;
  return r.M > 0 && r.N > 0 && r.K > 0 && (r.a.copy_transposed || r.b.copy_transposed);
}

// A capture takes the call only where it takes all of it: the GEMM's key resolved and, for a call
// that copies transposed operands, the copy's kernel loaded. Else the GEMM would refuse the
// capture after the copies, or earlier batches, were recorded into it. `what` names the call.
void check_capturable(Context& context, const Normalized& p, float* C, std::int64_t ldc,
                      const Options& options, const DeviceInfo& device, const std::string& what) {
  if ((copies_operands(p) && !detail::transpose_loaded(device)) ||
      !context.resolved(planned_gemm(p, 1, 0, C, ldc), options))
    throw InvalidArgument("stream", "is capturing a CUDA graph, and " + what + " is not resolved "
                                    "in this process yet (resolving it loads its kernels and may "
                                    "tune it, which cannot be captured): make this call once "
                                    "before the capture");
}

// `stream_checked`: the caller checked the stream, and a capture on it, for this call already.
void run_one(Context& context, const Normalized& p, float alpha, float beta, float* C,
             std::int64_t ldc, cudaStream_t stream, const Options& options,
             bool stream_checked = false) {
  check_before_launch(p, C);
  if (!copies_operands(p)) {  // gemm() checks the stream and refuses an unresolved key itself
    context.gemm(planned_gemm(p, alpha, beta, C, ldc), stream, options);
    return;
  }
  const detail::RowMajorReduction& r = p.reduction;
  const DeviceInfo& device = current_device();
  if (!stream_checked) {  // before the transposes are enqueued on it
    detail::check_stream(stream, device);
    if (detail::captures_a_graph(stream))
      check_capturable(context, p, C, ldc, options, device,
                       "the GEMM this call runs once it copies its transposed operands");
  }
  std::optional<detail::StreamWorkspace> a_copy, b_copy;
  const float* a = r.a.copy_transposed ? row_major_copy(device, p.a, a_copy, stream).data : nullptr;  // M x K
  const float* b = r.b.copy_transposed ? row_major_copy(device, p.b, b_copy, stream).data : nullptr;  // K x N
  context.gemm(planned_gemm(p, alpha, beta, C, ldc, a, b), stream, options);
  if (a_copy) a_copy->release();
  if (b_copy) b_copy->release();
}

}  // namespace

void Context::gemm(Layout layout, Op op_a, Op op_b, std::int64_t M, std::int64_t N, std::int64_t K,
                   float alpha, const float* A, std::int64_t lda, const float* B, std::int64_t ldb,
                   float beta, float* C, std::int64_t ldc, cudaStream_t stream) {
  gemm(layout, op_a, op_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream,
       settings_.options);
}

void Context::gemm(Layout layout, Op op_a, Op op_b, std::int64_t M, std::int64_t N, std::int64_t K,
                   float alpha, const float* A, std::int64_t lda, const float* B, std::int64_t ldb,
                   float beta, float* C, std::int64_t ldc, cudaStream_t stream,
                   const Options& options) {
  const Normalized p = normalize(layout, op_a, op_b, M, N, K, A, lda, B, ldb, ldc);
  detail::check_options(options);  // before the transposes are enqueued, as the arguments are
  run_one(*this, p, alpha, beta, C, ldc, stream, options);
}

void Context::gemm_strided_batched(Layout layout, Op op_a, Op op_b, std::int64_t M,
                                   std::int64_t N, std::int64_t K, float alpha, const float* A,
                                   std::int64_t lda, std::int64_t stride_a, const float* B,
                                   std::int64_t ldb, std::int64_t stride_b, float beta, float* C,
                                   std::int64_t ldc, std::int64_t stride_c,
                                   std::int64_t batch_count, cudaStream_t stream) {
  gemm_strided_batched(layout, op_a, op_b, M, N, K, alpha, A, lda, stride_a, B, ldb, stride_b,
                       beta, C, ldc, stride_c, batch_count, stream, settings_.options);
}

void Context::gemm_strided_batched(Layout layout, Op op_a, Op op_b, std::int64_t M,
                                   std::int64_t N, std::int64_t K, float alpha, const float* A,
                                   std::int64_t lda, std::int64_t stride_a, const float* B,
                                   std::int64_t ldb, std::int64_t stride_b, float beta, float* C,
                                   std::int64_t ldc, std::int64_t stride_c,
                                   std::int64_t batch_count, cudaStream_t stream,
                                   const Options& options) {
  if (batch_count < 0)
    throw InvalidArgument("batch_count", "must be >= 0, got " + std::to_string(batch_count));
  for (auto [name, v] : {std::pair<const char*, std::int64_t>{"stride_a", stride_a},
                         {"stride_b", stride_b}, {"stride_c", stride_c}})
    if (v < 0) throw InvalidArgument(name, "must be >= 0, got " + std::to_string(v));
  const Normalized p = normalize(layout, op_a, op_b, M, N, K, A, lda, B, ldb, ldc);
  detail::check_options(options);  // also where there is nothing to do, as gemm() does
  const detail::RowMajorReduction& r = p.reduction;
  if (batch_count == 0 || r.M == 0 || r.N == 0) return;
  check_before_launch(p, C);
  // The row-major view of one C spans (rows - 1) * ldc + cols elements. Batches must not share
  // any, since each one's beta C would read another's output: they may follow one another
  // (stride_c >= the span) or sit side by side within each row (each batch's columns
  // [i * stride_c, i * stride_c + cols) inside one ldc-wide row), as interleaved outputs do.
  const std::int64_t c_span = detail::span_of(r.M, r.N, ldc);
  const bool one_after_another = stride_c >= c_span;
  const bool side_by_side = stride_c >= r.N && batch_count - 1 <= (ldc - r.N) / stride_c;
  if (batch_count > 1 && !one_after_another && !side_by_side)
    throw InvalidArgument("stride_c", "is " + std::to_string(stride_c) + ", but one C spans " +
                                          std::to_string(c_span) + " elements, and " +
                                          std::to_string(batch_count) + " batches of rows of " +
                                          std::to_string(r.N) + " do not fit side by side in ldc = " +
                                          std::to_string(ldc) +
                                          ": the outputs of the batches would overlap");
  detail::check_batch_reach("stride_c", stride_c, batch_count, c_span, "C");
  const bool reads_ab = r.K > 0;  // with K == 0 neither A nor B is read
  if (reads_ab) {
    const detail::RowMajorView a = detail::stored_view(layout, op_a, M, K);
    const detail::RowMajorView b = detail::stored_view(layout, op_b, K, N);
    detail::check_batch_reach("stride_a", stride_a, batch_count, detail::span_of(a.rows, a.cols, lda), "A");
    detail::check_batch_reach("stride_b", stride_b, batch_count, detail::span_of(b.rows, b.cols, ldb), "B");
  }
  const auto batch = [&](std::int64_t i) {
    Normalized one = p;
    const float* a_i = reads_ab && A != nullptr ? A + i * stride_a : nullptr;
    const float* b_i = reads_ab && B != nullptr ? B + i * stride_b : nullptr;
    one.a.data = r.a.source == detail::CallerOperand::a ? a_i : b_i;
    one.b.data = r.b.source == detail::CallerOperand::a ? a_i : b_i;
    return one;
  };
  const bool many = batch_count > 1;
  if (many) {
    const DeviceInfo& device = current_device();
    detail::check_stream(stream, device);
    // Batches whose pointers differ in alignment are keys of their own: a capture takes the call
    // only if it takes every batch, so each is asked before the first is enqueued.
    if (detail::captures_a_graph(stream)) {
      for (std::int64_t i = 0; i < batch_count; ++i)
        check_capturable(*this, batch(i), C + i * stride_c, ldc, options, device,
                         "the GEMM of batch " + std::to_string(i) + " of this call");
    }
  }
  for (std::int64_t i = 0; i < batch_count; ++i)
    run_one(*this, batch(i), alpha, beta, C + i * stride_c, ldc, stream, options, many);
}

}  // namespace tilemm
