// mydev_check — an application on the mydev backend: add, mul and relu run
// on mydev's own kernels, broadcast, in place and with out=; int64 too; a
// partial sum (which mydev's kernel declines), a bool add (a dtype it has
// no kernel for) and matmul (no kernel at all) run through loom's CPU
// fallback; backward works across both. Exits non-zero, naming what went
// wrong, otherwise.
#include <loom/loom.h>

#include <iostream>
#include <vector>

namespace {

bool expect(const char* what, bool ok) {
  if (!ok) std::cerr << "mydev_check: " << what << "\n";
  return ok;
}

uint64_t fallbacks() {
  uint64_t n = 0;
  for (const auto& r : loom::fallback_counts())
    if (r.device_type == "mydev") n += r.count;
  return n;
}

}  // namespace

int main() try {
  const loom::Device dev("mydev");
  bool ok = true;

  const uint64_t before = fallbacks();
  auto x = loom::from_vector<float>({-1.f, 2.f, -3.f, 4.f}, {4}, dev).requires_grad_();
  auto w = loom::from_vector<float>({1.f, 2.f, 3.f, 4.f}, {4}, dev);
  auto y = loom::relu(x * w + w);  // mul, add, relu: all native
  ok &= expect("relu(x * w + w) gave the wrong values", y.to_vector<float>() == std::vector<float>{0.f, 6.f, 0.f, 20.f});

  auto row = loom::from_vector<float>({10.f, 20.f}, {1, 2}, dev);
  auto m = loom::from_vector<float>({1.f, 2.f, 3.f, 4.f}, {2, 2}, dev);
  auto b = m.t() + row;  // a transposed and a broadcast input: strides, no copies
  ok &= expect("transposed + broadcast add gave the wrong values",
               b.to_vector<float>() == std::vector<float>{11.f, 23.f, 12.f, 24.f});
  m.mul_(m);  // in place: mul's own kernel, handed m as its output
  ok &= expect("in-place mul gave the wrong values", m.to_vector<float>() == std::vector<float>{1.f, 4.f, 9.f, 16.f});
  auto i = loom::from_vector<int64_t>({1, 2}, {2}, dev);
  ok &= expect("int64 add gave the wrong values", (i + i).to_vector<int64_t>() == std::vector<int64_t>{2, 4});
  ok &= expect("float32 and int64 add, mul, relu did not all run on mydev's own kernels", fallbacks() == before);

  // Through the CPU fallback: a partial sum (declined), bool add, matmul.
  ok &= expect("sum over dim 0 gave the wrong values", m.sum({0}).to_vector<float>() == std::vector<float>{10.f, 20.f});
  auto t = loom::from_vector<bool>({true, false}, {2}, dev);
  ok &= expect("bool add gave the wrong values", (t + t).to_vector<bool>() == std::vector<bool>{true, false});
  ok &= expect("matmul gave the wrong values", m.matmul(m).to_vector<float>() == std::vector<float>{37.f, 68.f, 153.f, 292.f});
  ok &= expect("sum, bool add and matmul did not go through the CPU fallback", fallbacks() == before + 3);

  y.sum().backward();  // relu's and mul's backward through mydev and the fallback
  ok &= expect("x.grad is wrong", x.grad().to_vector<float>() == std::vector<float>{0.f, 2.f, 0.f, 4.f});
  if (!ok) return 1;
  std::cout << "mydev_check: ok (add, mul, relu, full sum native on mydev, in place and strided; "
               "partial sum, bool add and matmul through the CPU fallback)\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "mydev_check: " << e.what() << "\n";
  return 1;
}
