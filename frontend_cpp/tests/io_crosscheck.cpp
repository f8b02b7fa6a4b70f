// io_crosscheck.cpp — the C++ half of io_python_crosscheck.py:
//   loom_io_crosscheck write <dir>   writes state_dict.safetensors (the
//                                    io_test_tensors.h tensors, metadata
//                                    {"from": "c++"}) and tensor.safetensors
//   loom_io_crosscheck check <dir>   reads what Python's loom.save wrote
//                                    there (py_state_dict / py_tensor)
// Exits 1 naming every difference.
#include "io_test_tensors.h"

#include <loom/io.h>

#include <iostream>
#include <string>

using namespace loom_io_test;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: loom_io_crosscheck write|check <dir>\n";
    return 2;
  }
  const std::string mode = argv[1], dir = argv[2];
  try {
    if (mode == "write") {
      loom::io::save(dir + "/state_dict.safetensors", make_all(), {{"from", "c++"}});
      loom::io::save(dir + "/tensor.safetensors", make({"t", loom::DType::Float32, {2, 3}}));
      return 0;
    }
    int bad = 0;
    const loom::io::Loaded sd = loom::io::load_with_metadata(dir + "/py_state_dict.safetensors");
    for (const Spec& s : specs()) {
      const loom::Tensor* t = sd.tensors.find(s.name);
      const std::string diff = t ? mismatch(s, *t) : s.name + ": missing";
      if (!diff.empty()) std::cerr << "py_state_dict: " << diff << "\n", ++bad;
    }
    if (sd.tensors.size() != specs().size()) std::cerr << "py_state_dict: wrong tensor count\n", ++bad;
    if (sd.metadata != loom::Metadata{{"from", "python"}}) std::cerr << "py_state_dict: wrong metadata\n", ++bad;
    const loom::Tensor t = loom::io::load_tensor(dir + "/py_tensor.safetensors");
    const std::string diff = mismatch({"t", loom::DType::Float32, {2, 3}}, t);
    if (!diff.empty()) std::cerr << "py_tensor: " << diff << "\n", ++bad;
    return bad == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
