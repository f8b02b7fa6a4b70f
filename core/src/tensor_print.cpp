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
#include <cctype>
#include <cstdio>
#include <iomanip>
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

// ---- libtorch's format (operator<<) -------------------------------------------------
// After aten/src/ATen/core/Formatting.cpp: one width and notation for every
// element (integer mode, fixed with 4 decimals and a common scale factor, or
// scientific), vectors one element per line, matrices row by row with their
// columns wrapped at 80 characters ("Columns 1 to 8"), higher dims as slices
// "(i,j,.,.) =", then "[ CPUFloatType{2,3} ]".

namespace loom {
namespace {

// libtorch's type names.
std::string type_string(const Tensor& t) {
  std::string dev = t.device().type_name();
  for (char& c : dev) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const char* kind = "Float";
  switch (t.dtype()) {
    case DType::Float32: kind = "Float"; break;
    case DType::Float64: kind = "Double"; break;
    case DType::Float16: kind = "Half"; break;
    case DType::BFloat16: kind = "BFloat16"; break;
    case DType::Int64: kind = "Long"; break;
    case DType::Int32: kind = "Int"; break;
    case DType::Int16: kind = "Short"; break;
    case DType::Int8: kind = "Char"; break;
    case DType::UInt8: kind = "Byte"; break;
    case DType::Bool: kind = "Bool"; break;
  }
  return dev + kind + "Type";
}

struct LibtorchFormat {
  double scale = 1;
  int width = 11;
  enum { Default, Fixed, Sci } notation = Default;
};

LibtorchFormat libtorch_format(const std::vector<double>& v) {
  LibtorchFormat f;
  if (v.empty()) return f;
  bool int_mode = true;
  for (double z : v)
    if (std::isfinite(z) && z != std::ceil(z)) {
      int_mode = false;
      break;
    }
  int exp_min = 0, exp_max = 0;
  bool any = false;
  for (double z : v) {
    const double a = std::fabs(z);
    if (!std::isfinite(a) || a == 0) continue;
    const int e = static_cast<int>(std::floor(std::log10(a))) + 1;
    exp_min = any ? std::min(exp_min, e) : e;
    exp_max = any ? std::max(exp_max, e) : e;
    any = true;
  }
  if (!any) exp_min = exp_max = 1;
  if (int_mode) {
    if (exp_max > 9) {
      f.width = 11;
      f.notation = LibtorchFormat::Sci;
    } else {
      f.width = exp_max + 1;
    }
    return f;
  }
  if (exp_max - exp_min > 4) {
    f.width = (std::abs(exp_max) > 99 || std::abs(exp_min) > 99) ? 12 : 11;
    f.notation = LibtorchFormat::Sci;
  } else if (exp_max > 5 || exp_max < 0) {
    f.width = 7;
    f.scale = std::pow(10, exp_max - 1);
    f.notation = LibtorchFormat::Fixed;
  } else {
    f.width = exp_max == 0 ? 7 : exp_max + 6;
    f.notation = LibtorchFormat::Fixed;
  }
  return f;
}

void put_value(std::ostream& os, const LibtorchFormat& f, double v) {
  std::ostringstream one;
  if (f.notation == LibtorchFormat::Fixed) one << std::fixed << std::setprecision(4);
  if (f.notation == LibtorchFormat::Sci) one << std::scientific << std::setprecision(4);
  one << v / f.scale;
  os << std::setw(f.width) << one.str();
}

void put_scale(std::ostream& os, const LibtorchFormat& f, const std::string& indent) {
  if (f.scale != 1) {
    std::ostringstream s;
    s << std::defaultfloat << f.scale;
    os << indent << " " << s.str() << " *\n";
  }
}

// Rows of a [rows, cols] block starting at `base` (row-major `values`).
void put_matrix(std::ostream& os, const std::vector<double>& values, size_t base, int64_t rows, int64_t cols,
                const LibtorchFormat& f) {
  put_scale(os, f, "");
  const int64_t per_line = std::max<int64_t>(1, (kLineWidth) / (f.width + 1));
  for (int64_t first = 0; first < cols; first += per_line) {
    const int64_t last = std::min(cols, first + per_line);
    if (cols > per_line) {
      if (first) os << "\n";
      os << "Columns " << first + 1 << " to " << last << "\n";
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = first; c < last; ++c) {
        put_value(os, f, values[base + static_cast<size_t>(r * cols + c)]);
        if (c + 1 != last) os << " ";
      }
      os << "\n";
    }
  }
}

}  // namespace

std::string Tensor::toString() const {
  if (!defined()) return "[ Tensor (undefined) ]";
  std::ostringstream os;
  const Tensor host = cpu().contiguous();
  const std::vector<double> v = host.numel() ? host.to_vector<double>() : std::vector<double>{};
  const LibtorchFormat f = libtorch_format(v);
  std::string sizes_text;
  for (int64_t i = 0; i < dim(); ++i) sizes_text += (i ? "," : "") + std::to_string(sizes()[i]);
  if (numel() == 0) {
    os << "[ " << type_string(*this) << "{" << sizes_text << "} ]";
    return os.str();
  }
  if (dim() == 0) {
    std::ostringstream one;
    one << std::defaultfloat << v[0];
    os << one.str() << "\n[ " << type_string(*this) << "{} ]";
    return os.str();
  }
  if (dim() == 1) {
    put_scale(os, f, "");
    for (double x : v) {
      put_value(os, f, x);
      os << "\n";
    }
  } else if (dim() == 2) {
    put_matrix(os, v, 0, size(0), size(1), f);
  } else {
    // Every [rows, cols] slice of the last two dims, labelled by its index.
    const int64_t rows = size(-2), cols = size(-1), block = rows * cols;
    const int64_t slices = numel() / std::max<int64_t>(block, 1);
    for (int64_t s = 0; s < slices; ++s) {
      std::string label = "(";
      int64_t rest = s;
      std::vector<int64_t> idx(static_cast<size_t>(dim() - 2));
      for (int64_t d = dim() - 3; d >= 0; --d) {
        idx[static_cast<size_t>(d)] = rest % size(d);
        rest /= size(d);
      }
      for (int64_t i : idx) label += std::to_string(i + 1) + ",";
      label += ".,.) = \n";
      if (s) os << "\n";
      os << label;
      put_matrix(os, v, static_cast<size_t>(s * block), rows, cols, f);
    }
  }
  os << "[ " << type_string(*this) << "{" << sizes_text << "} ]";
  return os.str();
}

}  // namespace loom
