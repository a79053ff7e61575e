// What it costs one core to read what another core has just written (docs/bench-method.md section 7). Two
// threads pinned to two logical processors: a cache line handed back and forth (the round trip), then a buffer
// written by the first and read by the second, against the first reading its own writes. On the 2-vCPU
// machines we measure on, this decides how much a kernel loses when the next operator's chunks land on the
// other thread. On session 39's Zen 5 a core read the other core's fresh 512 KB in 3-3.5 times the time of its own
// for an hour, then in 1.4-1.8 times (the hypervisor moves vCPUs): measure when the thread counts are compared.
//
//   build/native/bench/cpp/onemodel_cross_core [--cpus A,B] [--kib N]   (defaults: 0,1 and 512)
//
// Prints one line: round_trip_ns=.. remote_read_us=.. local_read_us=.. remote_over_local=..
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

bool pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Microseconds to read every 64-byte line of `buf` (the sum keeps the reads).
double read_lines(const std::vector<unsigned char>& buf, unsigned long& sum) {
  const double t0 = now_us();
  unsigned long s = 0;
  for (size_t i = 0; i < buf.size(); i += 64) s += buf[i];
  sum += s;
  return now_us() - t0;
}

int usage() {
  std::fprintf(stderr, "usage: onemodel_cross_core [--cpus A,B] [--kib N]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int a = 0, b = 1;
  long kib = 512;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return usage();
    const std::string value = argv[++i];
    if (arg == "--cpus" && std::sscanf(value.c_str(), "%d,%d", &a, &b) == 2 && a >= 0 && b >= 0 && a != b) continue;
    if (arg == "--kib" && (kib = std::atol(value.c_str())) > 0 && kib <= (long{1} << 20)) continue;
    return usage();
  }
  if (!pin(a)) {
    std::fprintf(stderr, "onemodel_cross_core: cannot run on logical processor %d\n", a);
    return 1;
  }
  // The round trip: the flag goes 2i+1 (from A) and 2i+2 (from B), 100000 times, once B is pinned.
  constexpr int kTrips = 100000;
  std::atomic<int> ready{0};  // 1: B is pinned; -1: it cannot be
  std::atomic<int> flag{0};
  std::thread pong([&] {
    if (!pin(b)) {
      ready.store(-1);
      return;
    }
    ready.store(1);
    for (int i = 0; i < kTrips; ++i) {
      while (flag.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      flag.store(2 * i + 2, std::memory_order_release);
    }
  });
  while (ready.load() == 0) {
  }
  if (ready.load() < 0) {
    pong.join();
    std::fprintf(stderr, "onemodel_cross_core: cannot run on logical processor %d\n", b);
    return 1;
  }
  const double t0 = now_us();
  for (int i = 0; i < kTrips; ++i) {
    flag.store(2 * i + 1, std::memory_order_release);
    while (flag.load(std::memory_order_acquire) != 2 * i + 2) {
    }
  }
  const double trip_ns = (now_us() - t0) * 1000.0 / kTrips;
  pong.join();
  // The reads: written on A each time, read on B, then written on A again and read on A; best of 7.
  std::vector<unsigned char> buf(static_cast<size_t>(kib) * 1024);
  unsigned long sum = 0;
  double remote = 1e30, local = 1e30;
  for (int r = 0; r < 7; ++r) {
    std::memset(buf.data(), r + 1, buf.size());
    double t = 0;
    std::thread reader([&] {
      if (pin(b)) t = read_lines(buf, sum);
    });
    reader.join();
    if (t > 0) remote = std::min(remote, t);
    std::memset(buf.data(), r + 2, buf.size());
    local = std::min(local, read_lines(buf, sum));
  }
  std::printf("round_trip_ns=%.0f remote_read_us=%.2f local_read_us=%.2f remote_over_local=%.2f (%lu)\n", trip_ns,
              remote, local, remote / local, sum % 7);
  return 0;
}
