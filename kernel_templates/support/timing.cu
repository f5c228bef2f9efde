// Support for timing short kernels (core/stream_hold.hpp). A kernel that runs for a few
// microseconds finishes before the host has enqueued the next one, so back-to-back timings of it
// measure the host's launch rate as much as the kernel. tilemm_hold_stream keeps its stream
// waiting while the host enqueues a batch of timed launches, which then run back to back.

// Returns once *release reaches `ticket` (mapped host memory that the host writes when the batch
// is enqueued; tickets only grow, compared modulo 2^32), or after `most_ns` nanoseconds of the
// GPU's global timer, so that a host that never releases it cannot keep the stream held.
extern "C" __global__ void tilemm_hold_stream(const volatile unsigned* release, unsigned ticket,
                                              unsigned long long most_ns) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    if (static_cast<int>(*release - ticket) >= 0) return;
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < most_ns);
}
