#include "differential_case.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <vector>

namespace tilemm::check {
namespace {

// splitmix64: decorrelates the per-case streams of one seed.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

class Draw {
 public:
  explicit Draw(std::uint64_t seed) : rng_(seed) {}
  std::int64_t between(std::int64_t lo, std::int64_t hi) {  // inclusive
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }
  bool chance(double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p; }
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  template <typename T>
  T pick(std::initializer_list<T> values) {
    return *(values.begin() + between(0, static_cast<std::int64_t>(values.size()) - 1));
  }

 private:
  std::mt19937_64 rng_;
};

std::vector<std::int64_t> primes_up_to(std::int64_t n) {
  std::vector<bool> composite(static_cast<std::size_t>(n + 1), false);
  std::vector<std::int64_t> primes;
  for (std::int64_t i = 2; i <= n; ++i) {
    if (composite[static_cast<std::size_t>(i)]) continue;
    primes.push_back(i);
    for (std::int64_t j = i * i; j <= n; j += i) composite[static_cast<std::size_t>(j)] = true;
  }
  return primes;
}

std::int64_t draw_dimension(Draw& d, std::int64_t max_dim) {
  switch (d.between(0, 5)) {
    case 0:
      return std::min<std::int64_t>(max_dim, d.between(1, 3));
    case 1: {
      static const std::vector<std::int64_t> primes = primes_up_to(1 << 16);
      const auto end = std::upper_bound(primes.begin(), primes.end(), max_dim);
      if (end == primes.begin()) return 1;
      return primes[static_cast<std::size_t>(d.between(0, end - primes.begin() - 1))];
    }
    case 2:
    case 3: {  // a multiple of a tile size, or one off it
      const std::int64_t tile = d.pick<std::int64_t>({16, 32, 64, 128});
      if (tile > max_dim) return max_dim;
      const std::int64_t v = tile * d.between(1, max_dim / tile);
      const std::int64_t off = d.pick<std::int64_t>({-1, 1});
      return d.between(0, 1) == 0 ? v : std::clamp<std::int64_t>(v + off, 1, max_dim);
    }
    default:  // log-uniform: small and large sizes alike
      return std::clamp<std::int64_t>(
          static_cast<std::int64_t>(std::exp(d.uniform(0.0, std::log(static_cast<double>(max_dim) + 1.0)))),
          1, max_dim);
  }
}

float draw_scalar(Draw& d) {
  switch (d.between(0, 3)) {
    case 0: return 0.0f;
    case 1: return 1.0f;
    case 2: return -1.0f;
    default: return static_cast<float>(d.uniform(-2.0, 2.0));
  }
}

std::int64_t draw_padding(Draw& d) {
  if (d.chance(0.5)) return 0;
  return d.chance(0.5) ? d.between(1, 3) : d.between(4, 17);
}

void draw_shape(Draw& d, CaseSpec& c, const DrawLimits& limits) {
  const std::int64_t max_dim = std::max<std::int64_t>(1, limits.max_dim);
  for (int attempt = 0;; ++attempt) {
    if (d.chance(0.2)) {
      c.M = c.N = c.K = draw_dimension(d, max_dim);
    } else {
      c.M = draw_dimension(d, max_dim);
      c.N = draw_dimension(d, max_dim);
      c.K = draw_dimension(d, max_dim);
      if (d.chance(0.3)) {  // one operand square: its transpose has its own shape
        if (d.chance(0.5)) c.K = c.M; else c.K = c.N;
      }
    }
    if (d.chance(0.15)) {  // 1-wide
      std::int64_t* dims[] = {&c.M, &c.N, &c.K};
      *dims[d.between(0, 2)] = 1;
    }
    if (d.chance(0.02)) {  // empty: a no-op, or C = beta C when K == 0
      std::int64_t* dims[] = {&c.M, &c.N, &c.K};
      *dims[d.between(0, 2)] = 0;
    }
    const double work = static_cast<double>(c.M) * static_cast<double>(c.N) *
                        static_cast<double>(c.K) * static_cast<double>(std::max<std::int64_t>(1, c.batch_count));
    if (work <= limits.max_work) return;
    if (attempt == 100) {  // limits too tight for the draw: shrink instead
      while (static_cast<double>(c.M) * static_cast<double>(c.N) * static_cast<double>(c.K) *
                 static_cast<double>(std::max<std::int64_t>(1, c.batch_count)) > limits.max_work &&
             std::max({c.M, c.N, c.K}) > 1) {
        std::int64_t& largest = c.M >= c.N && c.M >= c.K ? c.M : (c.N >= c.K ? c.N : c.K);
        largest = std::max<std::int64_t>(1, largest / 2);
      }
      return;
    }
  }
}

}  // namespace

const char* to_string(EntryPoint entry) {
  switch (entry) {
    case EntryPoint::gemm_row_major: return "tilemm::gemm(row-major)";
    case EntryPoint::gemm_blas: return "tilemm::gemm(layout, op)";
    case EntryPoint::gemm_strided_batched: return "tilemm::gemm_strided_batched";
    case EntryPoint::c_sgemm: return "tilemmSgemm";
    case EntryPoint::c_sgemm_strided_batched: return "tilemmSgemmStridedBatched";
  }
  return "unknown entry point";
}

bool is_batched(EntryPoint entry) {
  return entry == EntryPoint::gemm_strided_batched || entry == EntryPoint::c_sgemm_strided_batched;
}

Storage storage_of(Layout layout, Op op, std::int64_t rows, std::int64_t cols) {
  const bool flipped = (layout == Layout::column_major) != (op == Op::transpose);
  return flipped ? Storage{cols, rows, true} : Storage{rows, cols, false};
}

std::int64_t span_of(const Storage& s, std::int64_t ld) {
  if (s.rows == 0 || s.row_length == 0) return 0;
  return (s.rows - 1) * ld + s.row_length;
}

CaseSpec draw_case(std::uint64_t seed, std::int64_t index, const DrawLimits& limits) {
  Draw d(mix(seed ^ mix(static_cast<std::uint64_t>(index))));
  CaseSpec c;
  c.seed = seed;
  c.index = index;
  c.max_dim = limits.max_dim;
  c.entry = static_cast<EntryPoint>(d.between(0, kEntryPoints - 1));
  if (c.entry != EntryPoint::gemm_row_major) {
    c.layout = d.chance(0.5) ? Layout::row_major : Layout::column_major;
    c.op_a = d.chance(0.5) ? Op::none : Op::transpose;
    c.op_b = d.chance(0.5) ? Op::none : Op::transpose;
  }
  c.batch_count = is_batched(c.entry) ? d.between(0, 4) : 1;
  draw_shape(d, c, limits);
  const Storage a = storage_of(c.layout, c.op_a, c.M, c.K);
  const Storage b = storage_of(c.layout, c.op_b, c.K, c.N);
  const Storage cs = storage_of(c.layout, Op::none, c.M, c.N);
  c.lda = std::max<std::int64_t>(1, a.row_length) + draw_padding(d);
  c.ldb = std::max<std::int64_t>(1, b.row_length) + draw_padding(d);
  c.ldc = std::max<std::int64_t>(1, cs.row_length) + draw_padding(d);
  c.offset_a = d.between(0, 3);
  c.offset_b = d.between(0, 3);
  c.offset_c = d.between(0, 3);
  c.alpha = draw_scalar(d);
  c.beta = draw_scalar(d);
  if (is_batched(c.entry)) {
    // Gaps between batches, which the call must leave untouched; A or B sometimes shared.
    c.stride_a = c.batch_count > 1 && d.chance(0.15) ? 0 : span_of(a, c.lda) + d.between(0, 7);
    c.stride_b = c.batch_count > 1 && d.chance(0.15) ? 0 : span_of(b, c.ldb) + d.between(0, 7);
    c.stride_c = span_of(cs, c.ldc) + d.between(0, 7);
  }
  return c;
}

std::string describe(const CaseSpec& c) {
  std::ostringstream s;
  s.precision(9);
  s << "case " << c.index << " of seed " << c.seed << ": " << to_string(c.entry) << ", "
    << (c.layout == Layout::row_major ? "row-major" : "column-major") << ", op_a "
    << (c.op_a == Op::transpose ? "T" : "N") << ", op_b " << (c.op_b == Op::transpose ? "T" : "N")
    << ", M " << c.M << " N " << c.N << " K " << c.K << ", lda " << c.lda << " ldb " << c.ldb
    << " ldc " << c.ldc << ", offsets " << c.offset_a << "/" << c.offset_b << "/" << c.offset_c
    << " floats, alpha " << c.alpha << " beta " << c.beta;
  if (is_batched(c.entry))
    s << ", batch_count " << c.batch_count << ", strides " << c.stride_a << "/" << c.stride_b
      << "/" << c.stride_c;
  s << " (rerun: tilemm-check --seed " << c.seed << " --case " << c.index;
  if (c.max_dim != DrawLimits{}.max_dim) s << " --max-dim " << c.max_dim;
  s << ")";
  return s.str();
}

}  // namespace tilemm::check
