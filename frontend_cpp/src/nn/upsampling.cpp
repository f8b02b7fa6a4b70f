// upsampling.cpp — Upsample's printed form (loom/nn/upsampling.h), as
// PyTorch's: "scale_factor=2.0, mode='nearest'".
#include <loom/nn/upsampling.h>

#include <sstream>

namespace loom::nn {

namespace {
template <class T>
std::string tuple_text(const std::vector<T>& v) {
  std::ostringstream s;
  if (v.size() == 1) {
    s << v[0];
    return s.str();
  }
  s << "(";
  for (size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
  s << ")";
  return s.str();
}
}  // namespace

std::string UpsampleImpl::extra_repr() const {
  std::ostringstream s;
  if (options.scale_factor()) {
    std::vector<std::string> scales;
    for (double f : *options.scale_factor()) {
      std::ostringstream one;
      one << f;
      std::string text = one.str();
      if (text.find_first_of(".e") == std::string::npos) text += ".0";
      scales.push_back(text);
    }
    s << "scale_factor=" << tuple_text(scales);
  } else if (options.size()) {
    s << "size=" << tuple_text(*options.size());
  }
  s << ", mode='" << options.mode() << "'";
  return s.str();
}

}  // namespace loom::nn
