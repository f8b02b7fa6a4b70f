// torch_checkpoint.cpp — PyTorch's checkpoint format (torch.save) for C++,
// without PyTorch (loom/io.h: save_torch, load_torch).
//
// A zip (zip_records.h) of <name>/data.pkl, <name>/data/<key> (each
// storage's little-endian bytes), <name>/byteorder and <name>/version.
// Writing: data.pkl is an OrderedDict of name -> tensor, each tensor
// torch._utils._rebuild_tensor_v2 over a persistent storage, so Python's
// torch.load / loom.load read it as a state dict. Reading runs a pickle
// machine that knows only what checkpoints hold: dicts (OrderedDict
// included), lists, tuples, strings, bytes, numbers, bools, None, tensors,
// parameters, sizes, dtypes and devices. Any other global is refused, naming
// it, so a file never runs code; loading is weights_only by construction.
#include "file_bytes.h"
#include "zip_records.h"

#include <loom/error.h>
#include <loom/io.h>
#include <loom/ops.h>

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

namespace loom::io {
namespace {

// ---- reading ------------------------------------------------------------------------

struct Value;
using Ptr = std::shared_ptr<Value>;
struct Value {
  enum Kind { None, Bool, Int, Float, Str, Bytes, List, Tuple, Dict, Global, TensorValue } kind = None;
  int64_t i = 0;
  double f = 0;
  std::string s, module;  // Str / Bytes text; Global: module and name (s)
  std::vector<Ptr> items;
  std::vector<std::pair<Ptr, Ptr>> dict;
  Tensor tensor;
};

Ptr make(Value::Kind k) {
  auto v = std::make_shared<Value>();
  v->kind = k;
  return v;
}

const std::map<std::string, DType>& storage_dtypes() {
  static const std::map<std::string, DType> m = {
      {"FloatStorage", DType::Float32}, {"DoubleStorage", DType::Float64}, {"HalfStorage", DType::Float16},
      {"BFloat16Storage", DType::BFloat16}, {"LongStorage", DType::Int64}, {"IntStorage", DType::Int32},
      {"ShortStorage", DType::Int16}, {"CharStorage", DType::Int8}, {"ByteStorage", DType::UInt8},
      {"BoolStorage", DType::Bool}, {"UntypedStorage", DType::UInt8}};
  return m;
}

class Unpickler {
 public:
  Unpickler(const std::vector<uint8_t>& pkl, const std::map<std::string, const std::vector<uint8_t>*>& storages,
            std::string source)
      : p_(pkl), storages_(storages), source_(std::move(source)) {}

  Ptr run() {
    while (true) {
      const uint8_t op = byte();
      switch (op) {
        case 0x80: byte(); break;                       // PROTO
        case 0x95: take(8); break;                      // FRAME
        case '}': push(make(Value::Dict)); break;       // EMPTY_DICT
        case ']': push(make(Value::List)); break;       // EMPTY_LIST
        case ')': push(make(Value::Tuple)); break;      // EMPTY_TUPLE
        case '(': marks_.push_back(stack_.size()); break;  // MARK
        case 'X': push(str(Value::Str, u32())); break;  // BINUNICODE
        case 0x8c: push(str(Value::Str, byte())); break;  // SHORT_BINUNICODE
        case 'B': push(str(Value::Bytes, u32())); break;  // BINBYTES
        case 'C': push(str(Value::Bytes, byte())); break;  // SHORT_BINBYTES
        case 'q': memo_[byte()] = top(); break;         // BINPUT
        case 'r': memo_[u32()] = top(); break;          // LONG_BINPUT
        case 0x94: memo_[memo_.size()] = top(); break;  // MEMOIZE
        case 'h': push(memo(byte())); break;            // BINGET
        case 'j': push(memo(u32())); break;             // LONG_BINGET
        case 'c': {                                     // GLOBAL
          auto g = make(Value::Global);
          g->module = line();
          g->s = line();
          push(g);
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          auto name = pop(), module = pop();
          auto g = make(Value::Global);
          g->module = module->s;
          g->s = name->s;
          push(g);
          break;
        }
        case 'R': {  // REDUCE
          auto args = pop(), fn = pop();
          push(reduce(fn, args));
          break;
        }
        case 0x81: {  // NEWOBJ (cls, args)
          auto args = pop(), cls = pop();
          push(reduce(cls, args));
          break;
        }
        case 'b': {  // BUILD: an OrderedDict's attributes (_metadata) are dropped
          auto state = pop();
          if (top()->kind != Value::Dict) bad("BUILD on a value that is not a dict");
          break;
        }
        case 's': {  // SETITEM
          auto v = pop(), k = pop();
          dict_top()->dict.emplace_back(k, v);
          break;
        }
        case 'u': {  // SETITEMS
          auto items = since_mark();
          if (items.size() % 2) bad("SETITEMS with an odd number of values");
          auto d = dict_top();
          for (size_t i = 0; i < items.size(); i += 2) d->dict.emplace_back(items[i], items[i + 1]);
          break;
        }
        case 'a': {  // APPEND
          auto v = pop();
          list_top()->items.push_back(v);
          break;
        }
        case 'e': {  // APPENDS
          auto items = since_mark();
          auto l = list_top();
          l->items.insert(l->items.end(), items.begin(), items.end());
          break;
        }
        case 't': {  // TUPLE
          auto t = make(Value::Tuple);
          t->items = since_mark();
          push(t);
          break;
        }
        case 0x85:
        case 0x86:
        case 0x87: {  // TUPLE1..3
          auto t = make(Value::Tuple);
          t->items.resize(op - 0x84);
          for (size_t k = t->items.size(); k-- > 0;) t->items[k] = pop();
          push(t);
          break;
        }
        case 'J': push(integer(static_cast<int32_t>(u32()))); break;  // BININT
        case 'K': push(integer(byte())); break;                       // BININT1
        case 'M': push(integer(u16())); break;                        // BININT2
        case 0x8a: push(integer(long_bytes(byte()))); break;          // LONG1
        case 0x8b: push(integer(long_bytes(u32()))); break;           // LONG4
        case 'G': {                                                   // BINFLOAT, big-endian
          uint64_t b = 0;
          for (uint8_t c : take(8)) b = b << 8 | c;
          auto v = make(Value::Float);
          v->f = std::bit_cast<double>(b);
          push(v);
          break;
        }
        case 0x88:
        case 0x89: {  // NEWTRUE / NEWFALSE
          auto v = make(Value::Bool);
          v->i = op == 0x88;
          push(v);
          break;
        }
        case 'N': push(make(Value::None)); break;
        case 'Q': push(storage(pop())); break;  // BINPERSID
        case '.': return pop();                 // STOP
        default: bad(loom::detail::cat("pickle opcode 0x", std::hex, static_cast<int>(op), " is not supported"));
      }
    }
  }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    throw Error(loom::detail::cat(source_, ": ", what, " (in data.pkl at byte ", at_, ")"));
  }
  uint8_t byte() {
    if (at_ >= p_.size()) bad("the pickle ends early");
    return p_[at_++];
  }
  std::vector<uint8_t> take(size_t n) {
    if (n > p_.size() - at_) bad("the pickle ends early");
    std::vector<uint8_t> out(p_.begin() + static_cast<std::ptrdiff_t>(at_), p_.begin() + static_cast<std::ptrdiff_t>(at_ + n));
    at_ += n;
    return out;
  }
  uint32_t u16() { return byte() | static_cast<uint32_t>(byte()) << 8; }
  uint32_t u32() { return u16() | u16() << 16; }
  std::string line() {
    std::string s;
    for (uint8_t c = byte(); c != '\n'; c = byte()) s += static_cast<char>(c);
    return s;
  }
  int64_t long_bytes(size_t n) {
    if (n > 8) bad("an integer wider than 64 bits");
    const auto b = take(n);
    uint64_t v = 0;
    for (size_t k = n; k-- > 0;) v = v << 8 | b[k];
    if (n && n < 8 && (b[n - 1] & 0x80)) v |= ~uint64_t{0} << (8 * n);  // sign-extend
    return static_cast<int64_t>(v);
  }
  Ptr str(Value::Kind k, size_t n) {
    auto v = make(k);
    const auto b = take(n);
    v->s.assign(b.begin(), b.end());
    return v;
  }
  Ptr integer(int64_t i) {
    auto v = make(Value::Int);
    v->i = i;
    return v;
  }
  void push(Ptr v) { stack_.push_back(std::move(v)); }
  Ptr top() {
    if (stack_.empty()) bad("stack underflow");
    return stack_.back();
  }
  Ptr pop() {
    Ptr v = top();
    stack_.pop_back();
    return v;
  }
  Ptr memo(size_t k) {
    auto it = memo_.find(k);
    if (it == memo_.end()) bad(loom::detail::cat("memo entry ", k, " is not set"));
    return it->second;
  }
  std::vector<Ptr> since_mark() {
    if (marks_.empty()) bad("no MARK");
    const size_t m = marks_.back();
    marks_.pop_back();
    std::vector<Ptr> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  Ptr dict_top() {
    Ptr d = top();
    if (d->kind != Value::Dict) bad("a dict operation on a value that is not a dict");
    return d;
  }
  Ptr list_top() {
    Ptr l = top();
    if (l->kind != Value::List) bad("a list operation on a value that is not a list");
    return l;
  }

  std::vector<int64_t> ints(const Ptr& t) {
    if (t->kind != Value::Tuple && t->kind != Value::List) bad("expected a tuple of ints");
    std::vector<int64_t> out;
    for (const Ptr& e : t->items) {
      if (e->kind != Value::Int) bad("expected a tuple of ints");
      out.push_back(e->i);
    }
    return out;
  }

  // ('storage', torch.<T>Storage, key, location, numel) -> its bytes as a flat tensor.
  Ptr storage(const Ptr& pid) {
    if (pid->kind != Value::Tuple || pid->items.size() != 5 || pid->items[0]->s != "storage" ||
        pid->items[1]->kind != Value::Global)
      bad("an unknown persistent id (expected ('storage', type, key, location, numel))");
    const auto dt = storage_dtypes().find(pid->items[1]->s);
    if (dt == storage_dtypes().end()) bad("unknown storage type torch." + pid->items[1]->s);
    const std::string key = pid->items[2]->kind == Value::Str ? pid->items[2]->s : std::to_string(pid->items[2]->i);
    const auto rec = storages_.find(key);
    if (rec == storages_.end()) bad("the checkpoint names storage '" + key + "' but has no data/" + key + " record");
    const std::vector<uint8_t>& bytes = *rec->second;
    const size_t item = itemsize(dt->second);
    if (bytes.size() % item) bad(loom::detail::cat("data/", key, " has ", bytes.size(), " bytes, not whole ", name(dt->second),
                                             " elements"));
    Tensor flat = empty({static_cast<int64_t>(bytes.size() / item)}, dt->second);
    if (!bytes.empty()) std::memcpy(flat.data_ptr(), bytes.data(), bytes.size());  // little-endian, as loom's
    auto v = make(Value::TensorValue);
    v->tensor = flat;
    return v;
  }

  Ptr reduce(const Ptr& fn, const Ptr& args) {
    if (fn->kind != Value::Global) bad("REDUCE of something that is not a global");
    if (args->kind != Value::Tuple) bad("REDUCE arguments that are not a tuple");
    const std::string full = fn->module + "." + fn->s;
    const auto& a = args->items;
    if (full == "collections.OrderedDict") return make(Value::Dict);
    if (full == "torch._utils._rebuild_tensor_v2" || full == "torch._utils._rebuild_tensor") {
      if (a.size() < 4 || a[0]->kind != Value::TensorValue) bad(full + " with unexpected arguments");
      const Tensor& flat = a[0]->tensor;
      const std::vector<int64_t> size = ints(a[2]), stride = ints(a[3]);
      if (a[1]->kind != Value::Int || size.size() != stride.size()) bad(full + " with unexpected arguments");
      const int64_t offset = a[1]->i;
      int64_t last = offset;
      bool empty_tensor = false;
      for (size_t k = 0; k < size.size(); ++k) {
        if (size[k] < 0 || stride[k] < 0) bad("negative sizes or strides");
        empty_tensor = empty_tensor || size[k] == 0;
        last += (size[k] - 1) * stride[k];
      }
      if (offset < 0 || (!empty_tensor && last >= flat.numel()))
        bad(loom::detail::cat("a tensor of size ", shape_str(size), " reaches past its storage's ", flat.numel(),
                        " elements"));
      auto v = make(Value::TensorValue);
      v->tensor = flat.as_strided(size, stride, offset);
      return v;
    }
    if (full == "torch._utils._rebuild_parameter" || full == "torch._utils._rebuild_parameter_with_state") {
      if (a.empty() || a[0]->kind != Value::TensorValue) bad(full + " without a tensor");
      return a[0];
    }
    if (full == "torch.Size") return a.empty() ? make(Value::Tuple) : a[0];
    if (full == "_codecs.encode") {  // protocol 2's bytes: encode(text, 'latin1')
      if (a.size() != 2 || a[0]->kind != Value::Str) bad("_codecs.encode with unexpected arguments");
      auto v = make(Value::Bytes);
      v->s = a[0]->s;  // the text's code points are the bytes
      return v;
    }
    if (full == "torch.device") {
      auto v = make(Value::Str);
      v->s = a.empty() ? "" : a[0]->s;
      return v;
    }
    bad("the checkpoint calls " + full + ", which a weights-only load does not run (loom's C++ loader reads "
        "tensors, parameters, dicts, lists, tuples, numbers and strings)");
  }

  const std::vector<uint8_t>& p_;
  const std::map<std::string, const std::vector<uint8_t>*>& storages_;
  std::string source_;
  size_t at_ = 0;
  std::vector<Ptr> stack_;
  std::vector<size_t> marks_;
  std::map<size_t, Ptr> memo_;
};

// The values as a flat state dict: dict keys and list indices joined with ".".
void flatten(const Ptr& v, const std::string& prefix, StateDict& out) {
  auto join = [&](const std::string& k) { return prefix.empty() ? k : prefix + "." + k; };
  switch (v->kind) {
    case Value::TensorValue: out.insert(prefix, v->tensor); break;
    case Value::Dict:
      for (const auto& [k, x] : v->dict) {
        if (k->kind == Value::Str) flatten(x, join(k->s), out);
        else if (k->kind == Value::Int) flatten(x, join(std::to_string(k->i)), out);
      }
      break;
    case Value::List:
    case Value::Tuple:
      for (size_t i = 0; i < v->items.size(); ++i) flatten(v->items[i], join(std::to_string(i)), out);
      break;
    case Value::Int: out.insert(prefix, full({}, v->i, DType::Int64)); break;
    case Value::Float: out.insert(prefix, full({}, v->f, DType::Float64)); break;
    case Value::Bool: out.insert(prefix, full({}, static_cast<bool>(v->i), DType::Bool)); break;
    default: break;  // strings, bytes, None: not tensors
  }
}

// ---- writing ------------------------------------------------------------------------

struct Pickler {
  std::vector<uint8_t> out;
  void op(uint8_t c) { out.push_back(c); }
  void text(const std::string& s) {
    op('X');
    for (int k = 0; k < 4; ++k) out.push_back(static_cast<uint8_t>(s.size() >> (8 * k)));
    out.insert(out.end(), s.begin(), s.end());
  }
  void global(const std::string& module, const std::string& name) {
    op('c');
    out.insert(out.end(), module.begin(), module.end());
    op('\n');
    out.insert(out.end(), name.begin(), name.end());
    op('\n');
  }
  void integer(int64_t v) {
    if (v >= INT32_MIN && v <= INT32_MAX) {
      op('J');
      for (int k = 0; k < 4; ++k) out.push_back(static_cast<uint8_t>(static_cast<uint32_t>(v) >> (8 * k)));
      return;
    }
    op(0x8a);  // LONG1: 8 little-endian two's-complement bytes
    op(8);
    for (int k = 0; k < 8; ++k) out.push_back(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * k)));
  }
  void ints(IntArrayRef v) {
    op('(');
    for (int64_t x : v) integer(x);
    op('t');
  }
};

const char* storage_name(DType t) {
  for (const auto& [n, d] : storage_dtypes())
    if (d == t && n != "UntypedStorage") return n.c_str();
  throw Error(loom::detail::cat("save_torch: no PyTorch storage type for ", name(t)));
}

// One tensor: torch._utils._rebuild_tensor_v2 over a new storage record.
void write_tensor(Pickler& p, std::vector<zip::Record>& storages, const std::string& archive_name, const Tensor& t) {
  const Tensor c = t.detach().cpu().contiguous();
  const std::string id = std::to_string(storages.size());
  std::vector<uint8_t> bytes(c.nbytes());
  if (!bytes.empty()) std::memcpy(bytes.data(), c.data_ptr(), bytes.size());
  storages.push_back({archive_name + "/data/" + id, std::move(bytes)});
  p.global("torch._utils", "_rebuild_tensor_v2");
  p.op('(');
  p.op('(');
  p.text("storage");
  p.global("torch", storage_name(c.dtype()));
  p.text(id);
  p.text("cpu");
  p.integer(c.numel());
  p.op('t');
  p.op('Q');
  p.integer(0);
  p.ints(c.sizes());
  p.ints(c.strides());
  p.op(0x89);  // requires_grad: False
  p.global("collections", "OrderedDict");
  p.op(')');
  p.op('R');
  p.op('t');
  p.op('R');
}

void write_file_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  auto close = [](std::FILE* f) { std::fclose(f); };
  std::unique_ptr<std::FILE, decltype(close)> file(std::fopen(path.c_str(), "wb"), close);
  if (!file) throw Error(loom::detail::cat(path, ": cannot open for writing: ", std::strerror(errno)));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), file.get()) == bytes.size();
  if (!ok || std::fclose(file.release()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(path.c_str());  // no half-written file that looks like a checkpoint
    throw Error(loom::detail::cat(path, ": write failed: ", reason));
  }
}

}  // namespace

std::vector<uint8_t> serialize_torch(const StateDict& tensors, TorchTopLevel top, std::string_view archive_name_view) {
  const std::string archive_name(archive_name_view);
  Pickler p;
  std::vector<zip::Record> storages;
  p.op(0x80);
  p.op(2);
  if (top == TorchTopLevel::Tensor) {
    LOOM_CHECK(tensors.size() == 1, "save: a single-tensor checkpoint holds one tensor, got ", tensors.size());
    write_tensor(p, storages, archive_name, tensors.begin()->second);
  } else if (top == TorchTopLevel::List) {
    p.op(']');
    if (!tensors.empty()) {
      p.op('(');
      for (const auto& [key, t] : tensors) write_tensor(p, storages, archive_name, t);
      p.op('e');
    }
  } else {
    p.global("collections", "OrderedDict");
    p.op(')');
    p.op('R');
    if (!tensors.empty()) {
      p.op('(');
      for (const auto& [key, t] : tensors) {
        p.text(key);
        write_tensor(p, storages, archive_name, t);
      }
      p.op('u');
    }
  }
  p.op('.');
  std::vector<zip::Record> records;
  records.push_back({archive_name + "/data.pkl", std::move(p.out)});
  records.push_back({archive_name + "/byteorder", {'l', 'i', 't', 't', 'l', 'e'}});
  for (auto& s : storages) records.push_back(std::move(s));
  records.push_back({archive_name + "/version", {'3', '\n'}});
  return zip::write(records);
}

std::string torch_archive_name(const std::string& path) {
  std::string stem = path.substr(path.find_last_of('/') + 1);
  stem = stem.substr(0, stem.find('.'));
  return stem.empty() ? "archive" : stem;
}

void save_torch(const std::string& path, const StateDict& tensors, TorchTopLevel top) {
  write_file_bytes(path, serialize_torch(tensors, top, torch_archive_name(path)));
}

StateDict load_torch_buffer(const uint8_t* data, size_t size, std::string_view source) {
  LOOM_CHECK(zip::looks_like_zip(data, size), source, ": not a PyTorch checkpoint (torch.save writes a zip archive)");
  const std::vector<zip::Record> records = zip::read(data, size, source);
  const zip::Record* pkl = nullptr;
  std::string prefix;
  for (const zip::Record& r : records) {
    const size_t slash = r.name.find('/');
    if (slash != std::string::npos && r.name.substr(slash + 1) == "data.pkl" && r.name.find('/', slash + 1) == std::string::npos) {
      pkl = &r;
      prefix = r.name.substr(0, slash + 1);
    }
  }
  LOOM_CHECK(pkl, source, ": the archive has no <name>/data.pkl record: not a torch.save checkpoint");
  std::map<std::string, const std::vector<uint8_t>*> storages;
  for (const zip::Record& r : records)
    if (r.name.rfind(prefix + "data/", 0) == 0) storages[r.name.substr(prefix.size() + 5)] = &r.data;
  for (const zip::Record& r : records)
    if (r.name == prefix + "byteorder")
      LOOM_CHECK(std::string(r.data.begin(), r.data.end()) == "little", source,
                 ": a big-endian checkpoint is not supported");
  Unpickler u(pkl->data, storages, std::string(source));
  StateDict out;
  flatten(u.run(), "", out);
  return out;
}

StateDict load_torch(const std::string& path, std::optional<Device> device) {
  const auto file = detail::FileBytes::open(path, MapMode::Read);
  StateDict sd = load_torch_buffer(file->data(), file->size(), path);
  if (device)
    for (auto& [k, t] : sd) t = t.to(*device);
  return sd;
}

}  // namespace loom::io
