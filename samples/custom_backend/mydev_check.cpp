// mydev_check — an application on the mydev backend: float32 add, mul and
// relu run on mydev's own kernels; a broadcast add (which mydev's kernel
// declines) and an int64 add (a dtype it has no kernel for) run through
// loom's CPU fallback; backward works across both. Exits non-zero, naming
// what went wrong, otherwise.
#include <loom/library.h>
#include <loom/loom.h>

#include <iostream>
#include <vector>

namespace {

bool expect(const char* what, bool ok) {
  if (!ok) std::cerr << "mydev_check: " << what << "\n";
  return ok;
}

}  // namespace

int main() try {
  const loom::Device dev("mydev");
  const auto fallbacks = [] { return loom::fallback_count("add", "mydev"); };
  bool ok = true;

  const uint64_t before = fallbacks();
  auto x = loom::from_vector<float>({-1.f, 2.f, -3.f, 4.f}, {4}, dev).requires_grad_();
  auto w = loom::from_vector<float>({1.f, 2.f, 3.f, 4.f}, {4}, dev);
  auto y = loom::relu(x * w + w);  // mul, add, relu: all native
  ok &= expect("relu(x * w + w) gave the wrong values", y.to_vector<float>() == std::vector<float>{0.f, 6.f, 0.f, 20.f});
  ok &= expect("float32 add did not run on mydev's own kernel", y.device() == dev && fallbacks() == before);

  auto row = loom::from_vector<float>({10.f, 20.f}, {1, 2}, dev);
  auto m = loom::from_vector<float>({1.f, 2.f, 3.f, 4.f}, {2, 2}, dev);
  auto b = m + row;  // broadcast: declined by the kernel, run by the CPU fallback
  ok &= expect("broadcast add gave the wrong values", b.to_vector<float>() == std::vector<float>{11.f, 22.f, 13.f, 24.f});
  ok &= expect("broadcast add did not go through the CPU fallback once", b.device() == dev && fallbacks() == before + 1);

  auto i = loom::from_vector<int64_t>({1, 2}, {2}, dev);
  ok &= expect("int64 add gave the wrong values", (i + i).to_vector<int64_t>() == std::vector<int64_t>{2, 4});

  y.sum().backward();  // relu's backward and mul's through mydev and the fallback
  ok &= expect("x.grad is wrong", x.grad().to_vector<float>() == std::vector<float>{0.f, 2.f, 0.f, 4.f});
  if (!ok) return 1;
  std::cout << "mydev_check: ok (add, mul, relu native on mydev; broadcast and int64 add through the CPU fallback)\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "mydev_check: " << e.what() << "\n";
  return 1;
}
