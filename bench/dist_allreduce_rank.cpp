// One rank of bench/dist_allreduce.py: times all_reduce (sum, float32) over
// loom's gloo backend at the sizes given, prints "<bytes> <median seconds>"
// per size on rank 0.
//   dist_allreduce_rank <rank> <world> <tcp://host:port> <reps> <bytes>...
#include <loom/distributed/distributed.h>
#include <loom/loom.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace dist = loom::distributed;

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s <rank> <world> <init_method> <reps> <bytes>...\n", argv[0]);
    return 2;
  }
  dist::InitOptions o;
  o.rank = std::atoi(argv[1]);
  o.world_size = std::atoi(argv[2]);
  o.init_method = argv[3];
  const int reps = std::atoi(argv[4]);
  // One compute thread, as the PyTorch peer: the ranks share this
  // machine's cores with the backends' threads.
  loom::set_num_threads(1);
  dist::init_process_group("gloo", o);
  for (int a = 5; a < argc; ++a) {
    const int64_t bytes = std::atoll(argv[a]);
    loom::Tensor t = loom::ones({bytes / 4});
    for (int w = 0; w < 3; ++w) dist::all_reduce(t);  // warm-up: connections, buffers
    std::vector<double> times;
    for (int r = 0; r < reps; ++r) {
      dist::barrier();
      const auto t0 = std::chrono::steady_clock::now();
      dist::all_reduce(t);
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    if (o.rank == 0) std::printf("%lld %.9f\n", static_cast<long long>(bytes), times[times.size() / 2]);
    std::fflush(stdout);
  }
  dist::destroy_process_group();
  return 0;
}
