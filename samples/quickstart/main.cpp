// quickstart — a small computation on "cpu" and on the reference backend
// "sim", showing that an op sim lacks (matmul) still runs, through the CPU
// fallback, and is counted.
#include <loom/autograd.h>
#include <loom/loom.h>

#include <iostream>

int main() try {
  loom::manual_seed(0);
  auto a = loom::arange(6, loom::DType::Float32).view({2, 3});
  auto b = loom::ones({3, 2});
  std::cout << "a =\n" << a << "\n";
  std::cout << "relu(a @ b - 4) on cpu =\n" << (a.matmul(b) - 4.0).relu() << "\n\n";

  loom::Device sim("sim");
  auto as = a.to(sim);
  auto bs = b.to(sim);
  auto sum = as + as;  // sim's own add kernel
  std::cout << "a + a on sim =\n" << sum << "\n";
  auto prod = as.matmul(bs);  // sim has no matmul: runs on CPU and comes back
  std::cout << "a @ b on sim =\n" << prod << "\n";
  std::cout << "sum(a @ b) = " << prod.sum().item<float>() << "\n\n";

  // Autograd, here on sim: its own kernels plus the CPU fallback, no
  // gradient code in the plugin.
  auto w = loom::ones({3, 2}).to(sim).requires_grad_();
  auto loss = as.matmul(w).relu().sum();
  std::cout << "loss = " << loss << "\n";
  loss.backward();
  std::cout << "d loss / d w =\n" << w.grad() << "\n\n";

  std::cout << "fallbacks so far (op on device: count):\n";
  for (const auto& r : loom::fallback_counts())
    std::cout << "  " << r.op << " on " << r.device_type << ": " << r.count << "\n";
  return 0;
} catch (const loom::Error& e) {
  std::cerr << "quickstart: " << e.what() << "\n";
  return 1;
}
