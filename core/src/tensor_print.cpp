// tensor_print.cpp — repr like PyTorch's: tensor([[1., 2.], [3., 4.]], dtype=...).
//
// Follows torch/_tensor_str.py: one format for all elements (integer-valued
// floats print as "1.", otherwise 4 decimals, scientific notation when the
// magnitudes span more than 1e3 or leave [1e-4, 1e8]), right-aligned to a
// common width, rows wrapped at 80 columns, summarised past 1000 elements.
#include <loom/autograd.h>
#include <loom/ops.h>
#include <loom/tensor.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace loom {
namespace {

constexpr int64_t kThreshold = 1000;  // summarise above this many elements
constexpr int64_t kEdgeItems = 3;
constexpr int kLineWidth = 80;

struct Formatter {
  bool floating = false, boolean = false, int_mode = true, sci = false;
  int width = 1;

  std::string format(double v) const {
    char buf[64];
    if (boolean) return v != 0 ? "True" : "False";
    if (!floating) {
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
      return buf;
    }
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (sci) std::snprintf(buf, sizeof buf, "%.4e", v);
    else if (int_mode) std::snprintf(buf, sizeof buf, "%.0f.", v);
    else std::snprintf(buf, sizeof buf, "%.4f", v);
    return buf;
  }
  std::string padded(double v) const {
    std::string s = format(v);
    return std::string(static_cast<size_t>(std::max<int>(0, width - static_cast<int>(s.size()))), ' ') + s;
  }
};

Formatter make_formatter(DType t, const std::vector<double>& shown) {
  Formatter f;
  f.boolean = t == DType::Bool;
  f.floating = is_floating_point(t);
  if (f.floating) {
    double lo = INFINITY, hi = 0;
    bool any = false;
    for (double v : shown) {
      if (!std::isfinite(v)) continue;
      if (v != std::ceil(v)) f.int_mode = false;
      if (v == 0) continue;
      lo = std::min(lo, std::fabs(v));
      hi = std::max(hi, std::fabs(v));
      any = true;
    }
    if (any) {
      if (f.int_mode) f.sci = hi / lo > 1000.0 || hi > 1e8;
      else f.sci = hi / lo > 1000.0 || hi > 1e8 || lo < 1e-4;
    }
  }
  for (double v : shown) f.width = std::max<int>(f.width, static_cast<int>(f.format(v).size()));
  return f;
}

struct Printer {
  const std::vector<double>& values;  // row-major, whole tensor
  IntArrayRef sizes;
  DimVector strides;  // row-major strides of `sizes`
  bool summarize;
  Formatter fmt;

  // Indices shown along one dim.
  std::vector<int64_t> shown(int64_t n) const {
    std::vector<int64_t> idx;
    if (summarize && n > 2 * kEdgeItems) {
      for (int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
      idx.push_back(-1);  // the ellipsis
      for (int64_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
    } else {
      for (int64_t i = 0; i < n; ++i) idx.push_back(i);
    }
    return idx;
  }

  void collect(size_t dim, int64_t base, std::vector<double>& out) const {
    if (dim == sizes.size()) {
      out.push_back(values[static_cast<size_t>(base)]);
      return;
    }
    for (int64_t i : shown(sizes[dim]))
      if (i >= 0) collect(dim + 1, base + i * strides[dim], out);
  }

  void print(std::ostringstream& os, size_t dim, int64_t base, int indent) const {
    if (dim == sizes.size()) {
      os << fmt.padded(values[static_cast<size_t>(base)]);
      return;
    }
    os << '[';
    const auto idx = shown(sizes[dim]);
    if (dim + 1 == sizes.size()) {  // innermost: wrap at the line width
      const int per_line = std::max(1, (kLineWidth - indent) / (fmt.width + 2));
      int on_line = 0;
      for (size_t k = 0; k < idx.size(); ++k) {
        if (k) {
          os << ',';
          if (++on_line == per_line) {
            os << '\n' << std::string(static_cast<size_t>(indent + 1), ' ');
            on_line = 0;
          } else {
            os << ' ';
          }
        }
        if (idx[k] < 0) os << " ...";  // as torch: the ellipsis is an element
        else os << fmt.padded(values[static_cast<size_t>(base + idx[k] * strides[dim])]);
      }
    } else {
      const std::string sep = ",\n" + std::string(sizes.size() - dim - 2, '\n') +
                              std::string(static_cast<size_t>(indent + 1), ' ');
      for (size_t k = 0; k < idx.size(); ++k) {
        if (k) os << sep;
        if (idx[k] < 0) os << "...";
        else print(os, dim + 1, base + idx[k] * strides[dim], indent + 1);
      }
    }
    os << ']';
  }
};

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "tensor(undefined)";
  std::ostringstream os;
  const std::string prefix = "tensor(";
  std::vector<std::string> suffixes;
  if (!device().is_host() || device().index != 0 || device().type_name() != "cpu")
    suffixes.push_back("device='" + device().str() + "'");
  if (numel() == 0 && dim() != 1) {
    std::string s = "size=(";
    for (int64_t i = 0; i < dim(); ++i) s += (i ? ", " : "") + std::to_string(sizes()[i]);
    suffixes.push_back(s + (dim() == 1 ? ",)" : ")"));
  }
  const DType t = dtype();
  if (t != DType::Float32 && t != DType::Int64 && t != DType::Bool)
    suffixes.push_back("dtype=loom." + std::string(name(t)));
  // As PyTorch: the grad_fn of a non-leaf, requires_grad=True on a leaf.
  if (requires_grad()) {
    if (auto fn = grad_fn()) suffixes.push_back("grad_fn=<" + fn->name() + ">");
    else suffixes.push_back("requires_grad=True");
  }

  os << prefix;
  if (numel() == 0) {
    os << "[]";
  } else {
    const std::vector<double> values = to_vector<double>();
    Printer p{values, sizes(), contiguous_strides(sizes()), numel() > kThreshold, {}};
    std::vector<double> shown;
    p.collect(0, 0, shown);
    p.fmt = make_formatter(t, shown);
    p.print(os, 0, 0, static_cast<int>(prefix.size()));
  }
  for (const auto& s : suffixes) os << ", " << s;
  os << ')';
  return os.str();
}

}  // namespace loom
