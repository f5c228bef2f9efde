// The stream-K work split of a persistent GEMM kernel, shared by the templates that include it
// (tf32wgmma.cu and multistage.cu, with STREAM_K 1): which tiles of C and which of their K tiles
// each block computes, and which blocks' partial sums the block that finishes a cut tile adds.
// cmake/embed_templates.cmake pastes this file into each template that includes it, so NVRTC
// compiles one self-contained source and the template's hash covers these rules too. The
// functions depend on no macro and compile on the host as well: the families' enqueue fills a
// WorkSplit with them (core/stream_k_split.cpp), and tests/test_stream_k_split.cpp checks them.
#ifndef TILEMM_STREAM_K_CUH
#define TILEMM_STREAM_K_CUH

#ifndef TILEMM_INDEX_MAP
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define TILEMM_INDEX_MAP __device__ __forceinline__ constexpr
#else
#define TILEMM_INDEX_MAP inline constexpr
#endif
#endif

namespace stream_k {

// The work of a block with STREAM_K 1 (the host fills a WorkSplit, core/stream_k_split.cpp).
// The `ctas` blocks are persistent: block c takes the tiles c, c + ctas, ... below dp_tiles whole,
// then its share of the K tiles of the tiles from dp_tiles on (the last wave, or the last and the
// remainder, or all of them where they are fewer than the blocks), cut evenly in K tiles across
// the blocks in order: K tiles [units c / ctas, units (c + 1) / ctas) of them, counted tile by
// tile. A tile cut between blocks is summed by the block that holds its last K tiles: the others
// leave their partial sums in `partials` (one tile's per block: a block hands on at most one, the
// first of its cut-tile units) and raise their flag; it waits for the flags and adds the partials
// in block order, so the result does not depend on timing. The flags are zero at launch.
struct WorkSplit {
  long long tiles;     // tiles of C
  long long dp_tiles;  // tiles done whole, round robin
  int tiles_n;         // tiles per row of tiles
  int ctas;            // blocks
  float* partials;     // ctas x BM x BN floats
  int* flags;          // ctas
};

// One piece of a block's work: K tiles [k_begin, k_end) of tile `tile`.
struct Unit {
  int tile;  // below 2^31: the family's check_problem refuses more tiles for STREAM_K 1
  int k_begin, k_end;
};

// The most persistent blocks of one call, whatever the SM count: the workspace holds a partial
// tile and a flag for each.
constexpr int kMaxBlocks = 256;
// The fewest K tiles a block takes where tiles fewer than the blocks are all cut: a share is then
// several times the copies in flight, not mostly their start and end.
constexpr int kMinShareBelowOneWave = 16;

// The persistent blocks of a split of `tiles` tiles of `k_tiles` K tiles each on `sms` SMs: one
// per SM, up to kMaxBlocks. With fewer tiles than that: every tile cut in K across all of them
// where a block per tile would leave at least half the SMs idle and each block still gets
// kMinShareBelowOneWave K tiles; else a block per tile, nothing cut (a plain grid's launch).
TILEMM_INDEX_MAP int persistent_blocks(long long tiles, int k_tiles, int sms) {
  const int most = sms < 1 ? 1 : sms < kMaxBlocks ? sms : kMaxBlocks;
  if (tiles >= most) return most;
  if (tiles * 2 <= most &&
      tiles * k_tiles >= static_cast<long long>(most) * kMinShareBelowOneWave)
    return most;
  return tiles < 1 ? 1 : static_cast<int>(tiles);
}

// The tiles done whole, round robin, of `tiles` over `blocks` persistent blocks: all where they
// come out in whole waves or K has fewer than two tiles to cut; none where they are fewer than
// the blocks (all are cut); else all but the last full wave and the remainder, which are cut in K.
TILEMM_INDEX_MAP long long whole_tiles(long long tiles, int blocks, int k_tiles) {
  if (tiles % blocks == 0 || k_tiles < 2) return tiles;
  return tiles < blocks ? 0 : (tiles / blocks - 1) * blocks;
}

// The K tiles of the cut tiles that blocks before `block` take: where its share starts.
TILEMM_INDEX_MAP long long stream_k_start(const WorkSplit& w, int k_tiles, int block) {
  return (w.tiles - w.dp_tiles) * k_tiles * block / w.ctas;
}

// Block `block`'s units, in order, to `f`: the same sequence for its producer and consumers. Its
// share of the cut tiles goes last K tile first, so that the unit it hands on (the head of a cut
// tile) comes before the one it may wait in (the tail of a tile it finishes): every block raises
// its flag before it waits, and no block waits for a block that waits. In K order, block c would
// finish a tile before starting the one it hands on, and each block would wait for the one before
// it all the way down.
template <typename F>
TILEMM_INDEX_MAP void for_each_stream_k_unit(const WorkSplit& w, int k_tiles, int block, F&& f) {
  for (long long tile = block; tile < w.dp_tiles; tile += w.ctas)
    f(Unit{static_cast<int>(tile), 0, k_tiles});
  // In 32 bits from the share's first tile on: fewer than 2 ctas tiles are cut (whole_tiles), so a
  // share is under 2 k_tiles K tiles and ends before 3 k_tiles from there (k_tiles < 2^31 / 32).
  const long long begin = stream_k_start(w, k_tiles, block),
                  end = stream_k_start(w, k_tiles, block + 1);
  if (begin == end) return;  // no share (also where K has no tile: nothing is cut)
  const long long first_tile = begin / k_tiles;
  const int lo = static_cast<int>(begin - first_tile * k_tiles);
  const int base_tile = static_cast<int>(w.dp_tiles + first_tile);
  for (int u = static_cast<int>(end - first_tile * k_tiles); u > lo;) {
    const int t = (u - 1) / k_tiles;
    const int piece = t * k_tiles > lo ? t * k_tiles : lo;
    f(Unit{base_tile + t, piece - t * k_tiles, u - t * k_tiles});
    u = piece;
  }
}

// The first of the blocks whose shares hold K tiles of cut tile `tile`, which `block` finishes
// (the blocks from it to block - 1 hand it their partial sums).
TILEMM_INDEX_MAP int first_block_of_tile(const WorkSplit& w, int k_tiles, long long tile,
                                         int block) {
  const long long tile_start = (tile - w.dp_tiles) * k_tiles;
  int first = block;
  while (first > 0 && stream_k_start(w, k_tiles, first) > tile_start) --first;
  return first;
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
// The hand-on between blocks, each called by one thread of its block. A block that leaves a cut
// tile's partial sums raises its flag after a barrier that follows every thread's stores; the
// block that finishes the tile waits for the flags of blocks first .. block - 1, then a barrier
// lets all its threads read their partials.
__device__ __forceinline__ void raise_flag(const WorkSplit& w, int block) {
  // The stores the barrier ordered before this one, at GPU scope, before the flag.
  __threadfence();
  asm volatile("st.relaxed.gpu.global.b32 [%0], %1;\n" ::"l"(w.flags + block), "r"(1) : "memory");
}

__device__ __forceinline__ void wait_for_flags(const WorkSplit& w, int first, int block) {
  for (int c = first; c < block; ++c) {
    int raised = 0;
    do {
      asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n"
                   : "=r"(raised)
                   : "l"(w.flags + c)
                   : "memory");
    } while (raised == 0);
  }
}
#endif

}  // namespace stream_k

#endif  // TILEMM_STREAM_K_CUH
