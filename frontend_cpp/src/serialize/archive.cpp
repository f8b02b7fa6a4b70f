// archive.cpp — OutputArchive / InputArchive over PyTorch's checkpoint
// format (loom/io.h: serialize_torch, load_torch_buffer).
#include <loom/autograd.h>
#include <loom/error.h>
#include <loom/ops.h>
#include <loom/serialize/archive.h>

#include <istream>
#include <iterator>
#include <ostream>

namespace loom::serialize {

void OutputArchive::write(const std::string& key, const Tensor& tensor, bool) {
  LOOM_CHECK(tensor.defined(), "OutputArchive: the tensor for '", key, "' is undefined");
  entries_.insert(key, tensor.detach());
}

void OutputArchive::write(const std::string& key, const OutputArchive& nested) {
  for (const auto& [k, t] : nested.entries_) entries_.insert(key + "." + k, t);
}

void OutputArchive::write(const std::string& key, double value) { write(key, full({}, value, kDouble)); }
void OutputArchive::write(const std::string& key, int64_t value) { write(key, full({}, value, kLong)); }
void OutputArchive::write(const std::string& key, bool value) { write(key, full({}, value, kBool)); }

void OutputArchive::save_to(const std::string& filename) const { io::save_torch(filename, entries_, top_); }

void OutputArchive::save_to(std::ostream& stream) const {
  const std::vector<uint8_t> bytes = io::serialize_torch(entries_, top_);
  stream.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  LOOM_CHECK(stream.good(), "OutputArchive: writing ", bytes.size(), " bytes to the stream failed");
}

void OutputArchive::save_to(const std::function<size_t(const void*, size_t)>& writer) const {
  const std::vector<uint8_t> bytes = io::serialize_torch(entries_, top_);
  const size_t written = writer(bytes.data(), bytes.size());
  LOOM_CHECK(written == bytes.size(), "OutputArchive: the writer took ", written, " of ", bytes.size(), " bytes");
}

void InputArchive::load_from(const std::string& filename, std::optional<Device> device) {
  entries_ = io::load_torch(filename, device);
  source_ = filename;
  prefix_.clear();
}

void InputArchive::load_from(std::istream& stream, std::optional<Device> device) {
  const std::vector<char> bytes((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  load_from(bytes.data(), bytes.size(), device);
  source_ = "<stream>";
}

void InputArchive::load_from(const char* data, size_t size, std::optional<Device> device) {
  entries_ = io::load_torch_buffer(reinterpret_cast<const uint8_t*>(data), size, "<buffer>");
  if (device)
    for (auto& [k, t] : entries_) t = t.to(*device);
  source_ = "<buffer>";
  prefix_.clear();
}

bool InputArchive::try_read(const std::string& key, Tensor& tensor, bool) {
  const Tensor* stored = entries_.find(key);
  if (!stored) return false;
  if (!tensor.defined()) {
    tensor = *stored;
    return true;
  }
  autograd::NoGradGuard no_grad;
  tensor.set_data(stored->device() == tensor.device() ? *stored : stored->to(tensor.device()));
  return true;
}

void InputArchive::read(const std::string& key, Tensor& tensor, bool is_buffer) {
  if (try_read(key, tensor, is_buffer)) return;
  std::string known;
  for (const auto& k : entries_.keys()) known += (known.empty() ? "" : ", ") + k;
  throw Error(loom::detail::cat(source_, ": no serialized tensor '", prefix_, key, "' (the archive holds: ",
                                known.empty() ? "nothing" : known, ")"));
}

bool InputArchive::try_read(const std::string& key, InputArchive& nested) {
  const std::string prefix = key + ".";
  StateDict sub;
  for (const auto& [k, t] : entries_)
    if (k.rfind(prefix, 0) == 0) sub.insert(k.substr(prefix.size()), t);
  if (sub.empty()) return false;
  nested.entries_ = std::move(sub);
  nested.source_ = source_;
  nested.prefix_ = prefix_ + prefix;
  return true;
}

void InputArchive::read(const std::string& key, InputArchive& nested) {
  LOOM_CHECK(try_read(key, nested), source_, ": no serialized archive '", prefix_, key, "'");
}

const Tensor& InputArchive::number(const std::string& key) const {
  const Tensor* t = entries_.find(key);
  LOOM_CHECK(t, source_, ": no serialized value '", prefix_, key, "'");
  LOOM_CHECK(t->numel() == 1, source_, ": '", prefix_, key, "' holds ", t->numel(), " values, not one number");
  return *t;
}

void InputArchive::read(const std::string& key, double& value) { value = number(key).item<double>(); }
void InputArchive::read(const std::string& key, int64_t& value) { value = number(key).item<int64_t>(); }
void InputArchive::read(const std::string& key, bool& value) { value = number(key).item<bool>(); }

}  // namespace loom::serialize
