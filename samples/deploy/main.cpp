// deploy — runs a model traced and saved from Python (loom.jit.save) from
// C++ alone: no libpython, no loom Python package. It classifies the 8x8
// digits test set (samples/common/digits.h: the same split as
// samples/python/digits.py) and reports the accuracy.
//
//   deploy --model digits.loom [--device cpu|sim|cuda] [--data digits.csv.gz]
//          [--batch 100] [--min-accuracy 0.9]
//
// The model was traced with a dynamic batch: it runs here on batches of
// --batch digits, the last one smaller.
//
// Make the model with:
//   PYTHONPATH=build/python python3 samples/python/train_digits.py --model cnn \
//       --save-traced digits.loom
//
// Exits 0 when the accuracy reaches --min-accuracy, 1 when it does not, 2 on
// bad arguments, 3 when the model cannot be loaded or run (the error says why).
#include <loom/jit/module.h>
#include <loom/loom.h>

#include "digits.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>

namespace {

int usage(const std::string& why) {
  std::cerr << "deploy: " << why << "\n"
            << "usage: deploy --model FILE [--device cpu|sim|cuda] [--data digits.csv.gz] [--batch N] "
               "[--min-accuracy A]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_path, device = "cpu", data = loom_samples::kDigitsCsv;
  double min_accuracy = 0.0;
  int64_t batch = 100;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--model") model_path = v;
    else if (a == "--device") device = v;
    else if (a == "--data") data = v;
    else if (a == "--batch") {
      char* end = nullptr;
      batch = std::strtoll(v.c_str(), &end, 10);
      if (*end != '\0' || batch <= 0) return usage("--batch: '" + v + "' is not a positive integer");
    }
    else if (a == "--min-accuracy") {
      char* end = nullptr;
      min_accuracy = std::strtod(v.c_str(), &end);
      if (*end != '\0') return usage("--min-accuracy: '" + v + "' is not a number");
    } else {
      return usage("unknown argument '" + a + "'");
    }
  }
  if (model_path.empty()) return usage("--model is required");
  try {
    const loom::Device dev(device);
    const auto digits = loom_samples::load_digits(0.2, 0, data);
    loom::jit::Module model = loom::jit::load(model_path, dev);
    model.eval();
    const int64_t n = digits.x_test.size(0);
    int64_t correct = 0;
    for (int64_t start = 0; start < n; start += batch) {
      const int64_t len = std::min(batch, n - start);
      const loom::Tensor logits = model.forward({digits.x_test.narrow(0, start, len).contiguous().to(dev)})[0];
      correct += (logits.argmax(1).cpu() == digits.y_test.narrow(0, start, len)).sum().item<int64_t>();
    }
    const double accuracy = static_cast<double>(correct) / static_cast<double>(n);
    std::cout << "deploy: " << model_path << " (" << model.graph().nodes().size() << " nodes) on "
              << dev.str() << ": test accuracy " << accuracy << " on " << digits.y_test.size(0) << " digits\n";
    return accuracy >= min_accuracy ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "deploy: " << e.what() << "\n";
    return 3;
  }
}
