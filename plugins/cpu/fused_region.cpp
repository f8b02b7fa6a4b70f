// The CPU device type's fused_* slots (plugin_api.h, ABI 1.4): a fused
// elementwise region compiled into one pass over the data in cache-sized
// tiles. Each instruction is this plugin's own kernel for its op, called on
// a tile of kTile elements held in L1/L2 scratch, so a region computes
// exactly what its ops compute one by one (the same loops, the same math),
// while the data goes through memory once: the inputs are read once and
// the outputs written once, where node-by-node code writes and reads every
// intermediate.
//
// Per tile: an input the region reads contiguously is passed in place, one
// broadcast along the whole range (a scalar constant) as stride 0, and any
// other layout is gathered into scratch; an instruction whose arguments are
// all uniform runs once per call, not per tile; an instruction that is an
// output writes straight into the output. Tiles go to the threads in
// contiguous ranges (parallel_for), each thread with its own scratch.
//
// A region of float32/float64 ops with generated forms runs, once hot
// enough to pay for a compiler, as C++ made for it (region_codegen.hpp,
// region_compiler.hpp): one loop that keeps every intermediate in
// registers, computing with the same functors, so the same bits.
// LOOM_CPU_CODEGEN picks when: "auto" (the default: once the region has run
// kCodegenWarmElements elements, once per input layout), "always" (every
// call; tests), "require" (always, and a region the generator accepts but
// the compiler fails is an error: tests), "never".
#include "common.hpp"
#include "fused_region.hpp"
#include "region_compiler.hpp"

#include <loom/plugin/fused_ops.hpp>
#include <loom/plugin/strided.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

namespace loom::cpu {
namespace {

// 2048 elements: 16 KiB per scratch buffer of 8-byte values; a GELU's five
// live buffers stay in L2.
constexpr int64_t kTile = 2048;
// Ranges below this run on one thread (a region does several ops' work per
// element, so it splits earlier than one elementwise kernel).
constexpr int64_t kFusedGrain = kParallelGrain / 4;
// LOOM_CPU_CODEGEN=auto compiles a region once it has run this many
// elements over its calls: a compile costs ~0.5-1 s once per machine (the
// object is cached on disk), interpreting costs ~1 ns per element and op,
// so a region compiles when it is hot — a 16M-element call at once, a
// layer's activation after a few steps — while the small regions of a test
// suite never start the compiler.
constexpr int64_t kCodegenWarmElements = int64_t{1} << 22;

enum class Codegen { Never, Auto, Always, Require };

Codegen codegen_mode() {
  const char* v = std::getenv("LOOM_CPU_CODEGEN");
  const std::string s = v ? v : "";
  if (s.empty() || s == "auto") return Codegen::Auto;
  if (s == "never" || s == "0") return Codegen::Never;
  if (s == "always") return Codegen::Always;
  if (s == "require") return Codegen::Require;
  fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu: LOOM_CPU_CODEGEN must be auto, always, require or never, got '%s'",
       s.c_str());
}

struct KernelRef {
  LoomKernelFn fn = nullptr;
  void* data = nullptr;
  uint64_t dtypes = 0;
  uint32_t flags = 0;
};

std::unordered_map<std::string, KernelRef>& kernel_table() {
  static std::unordered_map<std::string, KernelRef> table;
  return table;
}

// One instruction, with what it needs to run.
struct Step {
  int32_t op = 0;
  int32_t dtype = 0;
  int32_t num_args = 0;
  int32_t args[3] = {-1, -1, -1};
  int32_t input = -1;  // INPUT: the region input
  KernelRef kernel;
  std::vector<LoomValue> values;  // pointers into `blobs`
  std::vector<std::unique_ptr<char[]>> blobs;
  int32_t buffer = -1;  // scratch slot, for a non-output computed step
  int32_t output = -1;  // the region output it is, the first where several
  int32_t last_use = -1;
};

struct Compiled {
  std::vector<Step> steps;
  std::vector<int32_t> outputs;  // step of each output
  int32_t num_inputs = 0;
  int32_t num_buffers = 0;
  // Generated code: the region again (values in the steps' own copies),
  // and its compiled function per mask of uniform inputs (null: declined
  // or failed; the tile interpreter runs those calls).
  Codegen codegen = Codegen::Never;
  uint64_t hash = 0;
  std::vector<LoomFusedInstr> instrs;
  mutable std::mutex codegen_mutex;
  mutable std::unordered_map<uint64_t, RegionFn> generated;
  mutable std::atomic<int64_t> elements_run{0};  // over all calls ("auto")
};

size_t itemsize(int32_t dtype) { return plugin::dtype_itemsize(dtype); }

// Copies what a value points at, so the kernel outlives the region.
LoomValue own_value(const LoomValue& v, std::vector<std::unique_ptr<char[]>>& blobs) {
  LoomValue out = v;
  auto keep = [&](const void* p, size_t bytes) -> const void* {
    blobs.emplace_back(new char[bytes ? bytes : 1]);
    if (bytes) std::memcpy(blobs.back().get(), p, bytes);
    return blobs.back().get();
  };
  switch (v.kind) {
    case LOOM_VALUE_INT_LIST:
      out.u.ints.data = static_cast<const int64_t*>(keep(v.u.ints.data, sizeof(int64_t) * v.u.ints.size));
      break;
    case LOOM_VALUE_FLOAT_LIST:
      out.u.floats.data = static_cast<const double*>(keep(v.u.floats.data, sizeof(double) * v.u.floats.size));
      break;
    case LOOM_VALUE_STRING:
      out.u.str.data = static_cast<const char*>(keep(v.u.str.data, static_cast<size_t>(v.u.str.size)));
      break;
    default: break;
  }
  return out;
}

std::unique_ptr<Compiled> compile(const LoomFusedRegion& r) {
  auto c = std::make_unique<Compiled>();
  c->num_inputs = r.num_inputs;
  c->steps.resize(static_cast<size_t>(r.num_instrs));
  const auto& table = kernel_table();
  for (int32_t i = 0; i < r.num_instrs; ++i) {
    const LoomFusedInstr& in = r.instrs[i];
    Step& s = c->steps[static_cast<size_t>(i)];
    s.op = in.op;
    s.dtype = in.dtype;
    s.num_args = in.num_args;
    for (int a = 0; a < 3; ++a) s.args[a] = in.args[a];
    if (in.op == LOOM_FUSED_INPUT) {
      s.input = in.args[0];
      s.num_args = 0;
      continue;
    }
    const char* name = in.op == LOOM_FUSED_CAST ? "copy_" : plugin::fused_op_name(in.op);
    if (!name) fail(LOOM_STATUS_UNSUPPORTED, "cpu: fused op code %d is unknown to this plugin", in.op);
    auto it = table.find(name);
    // hardtanh has no kernel (its composite is clamp): for floating inputs
    // it is clamp's kernel with the same two bounds.
    const bool floating = (kFloatingMask & LOOM_DTYPE_BIT(in.compute_dtype)) != 0;
    if (it == table.end() && in.op == LOOM_FUSED_HARDTANH && floating) it = table.find("clamp");
    if (it == table.end()) fail(LOOM_STATUS_UNSUPPORTED, "cpu: no kernel for '%s' in a fused region", name);
    const int32_t compute = in.op == LOOM_FUSED_CAST ? in.dtype : in.compute_dtype;
    if (it->second.dtypes && !(it->second.dtypes & LOOM_DTYPE_BIT(compute)))
      fail(LOOM_STATUS_UNSUPPORTED, "cpu: the '%s' kernel does not take %s", name, plugin::dtype_name(compute));
    if (it->second.flags & LOOM_KERNEL_CONTIGUOUS_ONLY)
      fail(LOOM_STATUS_UNSUPPORTED, "cpu: the '%s' kernel needs contiguous operands", name);
    s.kernel = it->second;
    for (int32_t v = 0; v < in.num_values; ++v) s.values.push_back(own_value(in.values[v], s.blobs));
    for (int a = 0; a < s.num_args; ++a) c->steps[static_cast<size_t>(s.args[a])].last_use = i;
  }
  c->codegen = codegen_mode();
  c->hash = r.hash;
  c->instrs.assign(r.instrs, r.instrs + r.num_instrs);
  for (int32_t i = 0; i < r.num_instrs; ++i) {
    const Step& s = c->steps[static_cast<size_t>(i)];
    c->instrs[static_cast<size_t>(i)].values = s.values.empty() ? nullptr : s.values.data();
  }
  for (int32_t k = 0; k < r.num_outputs; ++k) {
    c->outputs.push_back(r.outputs[k]);
    Step& s = c->steps[static_cast<size_t>(r.outputs[k])];
    if (s.output < 0) s.output = k;
  }
  // Scratch slots by liveness: a slot is free again after its step's last
  // reader. Inputs get one too (used only when they must be gathered).
  std::vector<int32_t> free_slots;
  std::vector<std::vector<int32_t>> released(c->steps.size());
  for (size_t i = 0; i < c->steps.size(); ++i) {
    for (int32_t slot : released[i]) free_slots.push_back(slot);
    Step& s = c->steps[i];
    if (s.output >= 0 && s.op != LOOM_FUSED_INPUT) continue;
    if (free_slots.empty()) {
      s.buffer = c->num_buffers++;
    } else {
      s.buffer = free_slots.back();
      free_slots.pop_back();
    }
    // Free after the last reader has run: released at the step after it.
    const size_t end = s.last_use >= 0 ? static_cast<size_t>(s.last_use) + 1 : i + 1;
    if (end < c->steps.size()) released[end].push_back(s.buffer);
  }
  return c;
}

// How a step's value is laid out for the current call.
enum class Layout : uint8_t { Tile, Uniform, InPlace };

struct RunState {
  const Compiled& c;
  const LoomTensorDesc* inputs;
  const LoomTensorDesc* outputs;
  int64_t n;
  std::vector<Layout> layout;       // per step
  std::vector<const char*> uniform;  // per step: its one value (Uniform steps)
  std::unique_ptr<char[]> uniform_store;
};

bool all_zero_strides(const LoomTensorDesc& d) {
  for (int32_t k = 0; k < d.ndim; ++k)
    if (d.shape[k] != 1 && d.strides[k] != 0) return false;
  return true;
}

const char* element_ptr(const LoomTensorDesc& d) {
  return static_cast<const char*>(d.data) + d.byte_offset;
}

LoomTensorDesc flat_desc(void* data, int32_t dtype, const int64_t* len, const int64_t* stride) {
  LoomTensorDesc d{};
  d.struct_size = sizeof d;
  d.data = data;
  d.ndim = 1;
  d.dtype = dtype;
  d.shape = len;
  d.strides = stride;
  return d;
}

void run_kernel(const Step& s, const LoomTensorDesc* in, int32_t num_in, const LoomTensorDesc& out) {
  LoomKernelCall kc{};
  kc.struct_size = sizeof kc;
  kc.inputs = in;
  kc.num_inputs = num_in;
  kc.outputs = &out;
  kc.num_outputs = 1;
  kc.values = s.values.data();
  kc.num_values = static_cast<int32_t>(s.values.size());
  kc.kernel_data = s.kernel.data;
  if (LoomError* err = s.kernel.fn(&kc)) {
    std::string msg = err->message ? err->message : "(no message)";
    const int32_t code = err->code;
    if (err->destroy) err->destroy(err);
    fail(code, "%s", msg.c_str());
  }
}

// Runs step `s` over `len` elements: its arguments' descriptors are `in`
// (already built), its result goes to `out`.
void run_step(const Step& s, LoomTensorDesc* args, const LoomTensorDesc& out) {
  if (s.op == LOOM_FUSED_CAST) {
    LoomTensorDesc in[2] = {out, args[0]};
    run_kernel(s, in, 2, out);
    return;
  }
  run_kernel(s, args, s.num_args, out);
}

template <class T>
void gather_typed(T* dst, const LoomTensorDesc& d, int64_t start, int64_t len) {
  const T* src = reinterpret_cast<const T*>(element_ptr(d));
  int64_t idx[64], off = 0, rem = start;
  for (int32_t k = d.ndim - 1; k >= 0; --k) {
    idx[k] = d.shape[k] ? rem % d.shape[k] : 0;
    rem = d.shape[k] ? rem / d.shape[k] : 0;
    off += idx[k] * d.strides[k];
  }
  const int32_t last = d.ndim - 1;
  const int64_t inner = d.shape[last], step = d.strides[last];
  int64_t done = 0;
  while (done < len) {
    const int64_t run = std::min(inner - idx[last], len - done);
    for (int64_t j = 0; j < run; ++j) dst[done + j] = src[off + j * step];
    done += run;
    off += run * step;
    idx[last] += run;
    for (int32_t k = last; k > 0 && idx[k] == d.shape[k]; --k) {  // carry
      off -= idx[k] * d.strides[k];
      idx[k] = 0;
      ++idx[k - 1];
      off += d.strides[k - 1];
    }
  }
}

void gather(char* dst, const LoomTensorDesc& d, int64_t start, int64_t len) {
  switch (itemsize(d.dtype)) {
    case 1: gather_typed(reinterpret_cast<uint8_t*>(dst), d, start, len); break;
    case 2: gather_typed(reinterpret_cast<uint16_t*>(dst), d, start, len); break;
    case 4: gather_typed(reinterpret_cast<uint32_t*>(dst), d, start, len); break;
    default: gather_typed(reinterpret_cast<uint64_t*>(dst), d, start, len); break;
  }
}

// Asks for the next tile of the inputs read in place while this one
// computes: a region runs several kernels over a tile, long enough for the
// hardware prefetcher to lose the stream, and each tile would otherwise
// start with a wait on memory.
void prefetch_next_tile(const RunState& st, int64_t start, int64_t len) {
  if (len <= 0) return;
  const Compiled& c = st.c;
  for (size_t i = 0; i < c.steps.size(); ++i) {
    const Step& s = c.steps[i];
    if (s.op != LOOM_FUSED_INPUT || st.layout[i] != Layout::InPlace) continue;
    const size_t item = itemsize(s.dtype);
    const char* p = element_ptr(st.inputs[s.input]) + static_cast<size_t>(start) * item;
    const size_t bytes = static_cast<size_t>(len) * item;
    for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(p + off, 0, 3);
  }
}

// Elements [begin, end) of every output, tile by tile, on this thread.
void run_range(const RunState& st, int64_t begin, int64_t end) {
  const Compiled& c = st.c;
  const size_t ns = c.steps.size();
  std::unique_ptr<char[]> scratch(new char[static_cast<size_t>(c.num_buffers) * kTile * 8]);
  std::vector<LoomTensorDesc> desc(ns);
  static constexpr int64_t kOne = 1, kZero = 0;
  int64_t len = 0;
  for (int64_t t0 = begin; t0 < end; t0 += kTile) {
    len = std::min(kTile, end - t0);
    prefetch_next_tile(st, t0 + kTile, std::min(kTile, end - t0 - kTile));
    for (size_t i = 0; i < ns; ++i) {
      const Step& s = c.steps[i];
      if (st.layout[i] == Layout::Uniform) {
        desc[i] = flat_desc(const_cast<char*>(st.uniform[i]), s.dtype, &len, &kZero);
        continue;
      }
      char* buffer = s.buffer >= 0 ? scratch.get() + static_cast<size_t>(s.buffer) * kTile * 8 : nullptr;
      if (s.op == LOOM_FUSED_INPUT) {
        const LoomTensorDesc& d = st.inputs[s.input];
        if (st.layout[i] == Layout::InPlace) {
          desc[i] = flat_desc(const_cast<char*>(element_ptr(d)) + t0 * itemsize(s.dtype), s.dtype, &len, &kOne);
        } else {
          gather(buffer, d, t0, len);
          desc[i] = flat_desc(buffer, s.dtype, &len, &kOne);
        }
        if (s.output >= 0)
          std::memcpy(static_cast<char*>(st.outputs[s.output].data) + t0 * itemsize(s.dtype),
                      static_cast<const char*>(desc[i].data), static_cast<size_t>(len) * itemsize(s.dtype));
        continue;
      }
      void* dst = s.output >= 0 ? static_cast<char*>(st.outputs[s.output].data) + t0 * itemsize(s.dtype)
                                : static_cast<void*>(buffer);
      desc[i] = flat_desc(dst, s.dtype, &len, &kOne);
      LoomTensorDesc args[3];
      for (int a = 0; a < s.num_args; ++a) args[a] = desc[static_cast<size_t>(s.args[a])];
      run_step(s, args, desc[i]);
    }
  }
}

// Whether each step is uniform for this call (inputs broadcast over the
// whole range, and steps of only uniform arguments), and those steps'
// values, computed once.
void plan_call(RunState& st) {
  const Compiled& c = st.c;
  const size_t ns = c.steps.size();
  st.layout.assign(ns, Layout::Tile);
  st.uniform.assign(ns, nullptr);
  st.uniform_store.reset(new char[ns * 8]);
  static constexpr int64_t kOne = 1;
  std::vector<LoomTensorDesc> one(ns);
  for (size_t i = 0; i < ns; ++i) {
    const Step& s = c.steps[i];
    char* slot = st.uniform_store.get() + i * 8;
    if (s.op == LOOM_FUSED_INPUT) {
      const LoomTensorDesc& d = st.inputs[s.input];
      if (all_zero_strides(d) && s.output < 0) {
        st.layout[i] = Layout::Uniform;
        st.uniform[i] = element_ptr(d);
        one[i] = flat_desc(const_cast<char*>(element_ptr(d)), s.dtype, &kOne, &kOne);
      } else if (plugin::is_contiguous(d)) {
        st.layout[i] = Layout::InPlace;
      }
      continue;
    }
    bool uniform = s.output < 0;
    for (int a = 0; a < s.num_args && uniform; ++a) uniform = st.layout[static_cast<size_t>(s.args[a])] == Layout::Uniform;
    if (!uniform) continue;
    st.layout[i] = Layout::Uniform;
    st.uniform[i] = slot;
    one[i] = flat_desc(slot, s.dtype, &kOne, &kOne);
    LoomTensorDesc args[3];
    for (int a = 0; a < s.num_args; ++a) args[a] = one[static_cast<size_t>(s.args[a])];
    run_step(s, args, one[i]);
  }
}

// The compiled function of `c` for this call's uniform inputs, or null
// (declined, no compiler, or the compiler failed: the tile interpreter
// runs it; under "require" a failure is an error instead). Generated once
// per mask.
RegionFn generated_fn(const Compiled& c, uint64_t uniform_inputs) {
  std::lock_guard<std::mutex> lock(c.codegen_mutex);
  if (auto it = c.generated.find(uniform_inputs); it != c.generated.end()) return it->second;
  LoomFusedRegion r{};
  r.struct_size = sizeof r;
  r.hash = c.hash;
  r.num_inputs = c.num_inputs;
  r.num_instrs = static_cast<int32_t>(c.instrs.size());
  r.instrs = c.instrs.data();
  r.num_outputs = static_cast<int32_t>(c.outputs.size());
  r.outputs = c.outputs.data();
  const RegionSource src = generate_region(r, uniform_inputs);
  RegionFn fn = nullptr;
  if (src.declined.empty()) {
    const CompiledRegion compiled = compile_region(src.code);
    if (!compiled.fn && c.codegen == Codegen::Require)
      fail(LOOM_STATUS_INTERNAL, "cpu fused region: LOOM_CPU_CODEGEN=require, and compiling it failed: %s",
           compiled.error.c_str());
    if (!compiled.fn) {
      static std::once_flag warned;  // once per process: the reason is usually the toolchain's
      std::call_once(warned, [&] {
        std::fprintf(stderr, "loom cpu: fused regions run on the tile interpreter: %s\n", compiled.error.c_str());
      });
    }
    fn = compiled.fn;
  }
  c.generated.emplace(uniform_inputs, fn);
  return fn;
}

// Elements [begin, end) through the compiled function: inputs read in
// place or uniform are passed as pointers; any other layout is gathered a
// tile at a time into this thread's scratch.
void run_range_generated(const RunState& st, RegionFn fn, int64_t begin, int64_t end) {
  const Compiled& c = st.c;
  std::vector<const void*> in(static_cast<size_t>(c.num_inputs), nullptr);
  std::vector<void*> out(c.outputs.size(), nullptr);
  std::vector<size_t> in_place, gathered;  // steps of the inputs read in place / gathered per tile
  for (size_t i = 0; i < c.steps.size(); ++i) {
    const Step& s = c.steps[i];
    if (s.op != LOOM_FUSED_INPUT) continue;
    if (st.layout[i] == Layout::Uniform) in[static_cast<size_t>(s.input)] = element_ptr(st.inputs[s.input]);
    else (st.layout[i] == Layout::InPlace ? in_place : gathered).push_back(i);
  }
  // Points the in-place inputs and the outputs at element `at`.
  auto point_at = [&](int64_t at) {
    for (size_t i : in_place) {
      const Step& s = c.steps[i];
      in[static_cast<size_t>(s.input)] = element_ptr(st.inputs[s.input]) + at * itemsize(s.dtype);
    }
    for (size_t k = 0; k < c.outputs.size(); ++k)
      out[k] = const_cast<char*>(element_ptr(st.outputs[k])) + at * itemsize(st.outputs[k].dtype);
  };
  if (gathered.empty()) {
    point_at(begin);
    fn(end - begin, in.data(), out.data());
    return;
  }
  std::unique_ptr<char[]> scratch(new char[gathered.size() * kTile * 8]);
  for (int64_t t0 = begin; t0 < end; t0 += kTile) {
    const int64_t len = std::min(kTile, end - t0);
    for (size_t g = 0; g < gathered.size(); ++g) {
      const Step& s = c.steps[gathered[g]];
      char* buffer = scratch.get() + g * kTile * 8;
      gather(buffer, st.inputs[s.input], t0, len);
      in[static_cast<size_t>(s.input)] = buffer;
    }
    point_at(t0);
    fn(len, in.data(), out.data());
  }
}

// The compiled function for this call, when the mode and size call for one.
RegionFn pick_generated(const RunState& st) {
  const Compiled& c = st.c;
  if (c.codegen == Codegen::Never) return nullptr;
  if (c.codegen == Codegen::Auto && c.elements_run.fetch_add(st.n, std::memory_order_relaxed) + st.n < kCodegenWarmElements)
    return nullptr;
  uint64_t uniform_inputs = 0;
  for (size_t i = 0; i < c.steps.size(); ++i) {
    const Step& s = c.steps[i];
    if (s.op == LOOM_FUSED_INPUT && st.layout[i] == Layout::Uniform && s.input < 64)
      uniform_inputs |= uint64_t{1} << s.input;
  }
  return generated_fn(c, uniform_inputs);
}

LoomError* fused_compile(void*, int32_t, const LoomFusedRegion* region, void** out_kernel) {
  return plugin::guard([&] { *out_kernel = compile(*region).release(); });
}

LoomError* fused_run(void*, int32_t, void* kernel, const LoomTensorDesc* inputs, int32_t num_inputs,
                     const LoomTensorDesc* outputs, int32_t num_outputs, void*) {
  return plugin::guard([&] {
    const Compiled& c = *static_cast<const Compiled*>(kernel);
    if (num_inputs != c.num_inputs || num_outputs != static_cast<int32_t>(c.outputs.size()))
      fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu fused region: expected %d inputs and %zu outputs, got %d and %d",
           c.num_inputs, c.outputs.size(), num_inputs, num_outputs);
    RunState st{c, inputs, outputs, plugin::numel(outputs[0]), {}, {}, {}};
    if (st.n == 0) return;
    plan_call(st);
    if (RegionFn fn = pick_generated(st)) {
      parallel_for(st.n, kFusedGrain, [&](int64_t s, int64_t e) { run_range_generated(st, fn, s, e); });
      return;
    }
    parallel_for(st.n, kFusedGrain, [&](int64_t s, int64_t e) { run_range(st, s, e); });
  });
}

void fused_release(void*, void* kernel) { delete static_cast<Compiled*>(kernel); }

}  // namespace

void fill_fused_slots(LoomDeviceTypeDesc& d) {
  d.fused_compile = &fused_compile;
  d.fused_run = &fused_run;
  d.fused_release = &fused_release;
}

void remember_kernels_for_regions(const plugin::Registrar& r) {
  auto& table = kernel_table();
  for (const auto& k : r.registered_kernels())
    if (k.device_type == "cpu") table[k.op] = KernelRef{k.fn, k.kernel_data, k.dtypes, k.flags};
}

}  // namespace loom::cpu
