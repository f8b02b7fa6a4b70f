// sim_check — the smallest program that proves the sim backend works from
// an application: float add runs on sim's own kernel, int64 add (a dtype
// sim's kernel declines) runs through loom's CPU fallback, and both give the
// right numbers. Exits non-zero, naming what went wrong, otherwise.
#include <loom/library.h>
#include <loom/loom.h>

#include <cstdint>
#include <iostream>
#include <vector>

namespace {

template <typename T>
bool expect(const char* what, const std::vector<T>& got, const std::vector<T>& want) {
  if (got == want) return true;
  std::cerr << "sim_check: " << what << " gave the wrong values\n";
  return false;
}

}  // namespace

int main() try {
  loom::Device sim("sim");
  const std::vector<int64_t> sizes{4};

  const uint64_t before = loom::fallback_count("add", "sim");
  auto f = loom::from_vector<float>({1.f, 2.f, 3.f, 4.f}, sizes, sim);
  auto fsum = f + f;
  bool ok = expect("float32 add", fsum.to_vector<float>(), {2.f, 4.f, 6.f, 8.f});
  if (fsum.device() != sim || loom::fallback_count("add", "sim") != before) {
    std::cerr << "sim_check: float32 add did not run on sim's own kernel\n";
    ok = false;
  }

  auto i = loom::from_vector<int64_t>({1, 2, 3, 4}, sizes, sim);
  auto isum = i + i;
  ok &= expect<int64_t>("int64 add", isum.to_vector<int64_t>(), {2, 4, 6, 8});
  if (isum.device() != sim || loom::fallback_count("add", "sim") != before + 1) {
    std::cerr << "sim_check: int64 add did not go through the CPU fallback once\n";
    ok = false;
  }
  if (!ok) return 1;
  std::cout << "sim_check: ok (float32 add native on sim, int64 add through the CPU fallback)\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "sim_check: " << e.what() << "\n";
  return 1;
}
