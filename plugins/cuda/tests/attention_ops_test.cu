// The fused attention kernels' tile algorithm (kernels/attention_ops.cuh)
// and call reading (kernels/attention_call.hpp) on the host, against a
// naive float64 reference. Built by nvcc as a host program (no launches):
// each block function runs with a team that executes the block's 128
// threads one after another in a freshly scrambled order per phase, with
// shared memory and registers starting as NaN garbage, so a phase reading
// another thread's write of the same phase, or memory nobody wrote, shows
// up as a wrong (or NaN) result.
//
// Random problems: batch dims with broadcast (stride 0) and padded strides,
// transposed head dims, L and S not multiples of the tiles, head dims from
// 1 to 128, causal, bool and additive masks broadcast over batch or rows,
// fully masked rows (NaN output, lse −inf; gradients as the composite: dq 0
// for a bool-masked row, NaN for an additive −inf one, dv NaN).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "kernels/attention_call.hpp"
#include "kernels/attention_ops.cuh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace loom::cuda;
using namespace loom::cuda::attention;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Runs a block's phases thread after thread, in a new random order each time.
template <class State>
struct HostTeam {
  std::vector<State> st;
  std::vector<int> order;
  std::mt19937& rng;
  explicit HostTeam(std::mt19937& r) : st(kThreads), order(kThreads), rng(r) {
    std::memset(static_cast<void*>(st.data()), 0xff, st.size() * sizeof(State));  // NaN garbage
    for (int t = 0; t < kThreads; ++t) order[t] = t;
  }
  template <class F>
  void block(F&& f) { run(f); }
  template <class F>
  void warp(F&& f) { run(f); }
  template <class F>
  void run(F& f) {
    std::shuffle(order.begin(), order.end(), rng);
    for (int t : order) f(t, st[t]);
  }
};

template <class C>
std::vector<C> garbage(int64_t n) {
  return std::vector<C>(static_cast<size_t>(n), std::numeric_limits<C>::quiet_NaN());
}

// A strided host tensor. Its storage holds every offset its strides reach.
template <class T>
struct HostTensor {
  std::vector<int64_t> shape, strides;
  std::vector<T> buf;
  int32_t dtype;
  LoomTensorDesc desc() const {
    LoomTensorDesc d{};
    d.struct_size = sizeof d;
    d.data = const_cast<T*>(buf.data());
    d.ndim = static_cast<int32_t>(shape.size());
    d.dtype = dtype;
    d.shape = shape.data();
    d.strides = strides.data();
    return d;
  }
  int64_t offset(const std::vector<int64_t>& idx) const {
    int64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d) o += idx[d] * strides[d];
    return o;
  }
  double get(const std::vector<int64_t>& idx) const { return static_cast<double>(widen(buf[offset(idx)])); }
};

// Strides for `shape`: dims in `order` (innermost last) with `pad` extra
// elements per row of each, and stride 0 where `broadcast[d]`.
template <class T>
HostTensor<T> make_tensor(std::vector<int64_t> shape, int32_t dtype, const std::vector<int>& order,
                          const std::vector<bool>& broadcast, int64_t pad) {
  HostTensor<T> t{shape, std::vector<int64_t>(shape.size(), 0), {}, dtype};
  int64_t stride = 1, extent = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int d = *it;
    if (broadcast[d]) continue;
    t.strides[d] = stride;
    stride *= shape[d] + pad;
    extent += (shape[d] - 1) * t.strides[d];
  }
  t.buf.assign(static_cast<size_t>(std::max<int64_t>(extent, 1)), T{});
  return t;
}

template <class T>
void fill_uniform(HostTensor<T>& t, std::mt19937& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  for (T& x : t.buf) x = narrow<T>(static_cast<opmath_t<T>>(u(rng)));
}

// Row-major walk over a shape.
bool next_index(std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  for (size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < shape[d]) return true;
    idx[d] = 0;
  }
  return false;
}

std::vector<int64_t> cat(std::vector<int64_t> a, std::initializer_list<int64_t> b) {
  a.insert(a.end(), b);
  return a;
}

struct Config {
  std::vector<int64_t> batch;
  int64_t L, S, E, Ev;
  bool causal;
  MaskKind mask;
  bool transposed;  // q's head dim not innermost
  uint64_t seed;
};

template <class T>
struct Case {
  using C = opmath_t<T>;
  Config cfg;
  double scale;
  HostTensor<T> q, k, v, mask, out, go, gq, gk, gv;
  HostTensor<C> lse;
  HostTensor<uint8_t> bmask;

  explicit Case(const Config& c, std::mt19937& rng) : cfg(c) {
    const int32_t code = dtype_code<T>();
    const size_t nb = c.batch.size();
    std::bernoulli_distribution coin(0.35);
    auto bcast = [&](size_t extra) {  // broadcast some batch dims of size 1 or any
      std::vector<bool> b(nb + extra, false);
      for (size_t d = 0; d < nb; ++d) b[d] = coin(rng);
      return b;
    };
    auto order = [&](size_t n, bool transposed) {
      std::vector<int> o(n);
      for (size_t d = 0; d < n; ++d) o[d] = static_cast<int>(d);
      std::shuffle(o.begin(), o.begin() + static_cast<long>(nb), rng);
      if (transposed) std::swap(o[n - 1], o[n - 2]);
      return o;
    };
    scale = 1.0 / std::sqrt(static_cast<double>(c.E)) * (coin(rng) ? 1.7 : 1.0);
    q = make_tensor<T>(cat(c.batch, {c.L, c.E}), code, order(nb + 2, c.transposed), bcast(2), 1);
    k = make_tensor<T>(cat(c.batch, {c.S, c.E}), code, order(nb + 2, false), bcast(2), 0);
    v = make_tensor<T>(cat(c.batch, {c.S, c.Ev}), code, order(nb + 2, false), bcast(2), 2);
    go = make_tensor<T>(cat(c.batch, {c.L, c.Ev}), code, order(nb + 2, false), bcast(2), 0);
    for (auto* t : {&q, &k, &v, &go}) fill_uniform(*t, rng, -2, 2);
    // Masks broadcast over batch dims and, half the time, over rows (a key
    // padding mask); then a fully masked row or two.
    std::vector<bool> mb = bcast(2);
    if (coin(rng)) mb[nb] = true;
    if (c.mask == MaskKind::Bool) {
      bmask = make_tensor<uint8_t>(cat(c.batch, {c.L, c.S}), LOOM_DTYPE_BOOL, order(nb + 2, false), mb, 0);
      std::bernoulli_distribution keep(0.7);
      for (auto& x : bmask.buf) x = keep(rng);
      if (!mb[nb] && c.L > 2) {
        std::vector<int64_t> idx(nb + 2, 0);
        idx[nb] = c.L / 2;
        for (int64_t j = 0; j < c.S; ++j) {
          idx[nb + 1] = j;
          bmask.buf[static_cast<size_t>(bmask.offset(idx))] = 0;
        }
      }
    } else if (c.mask == MaskKind::Additive) {
      mask = make_tensor<T>(cat(c.batch, {c.L, c.S}), code, order(nb + 2, false), mb, 1);
      fill_uniform(mask, rng, -3, 1);
      std::bernoulli_distribution hole(0.2);
      for (auto& x : mask.buf)
        if (hole(rng)) x = narrow<T>(static_cast<C>(-INFINITY));
      if (!mb[nb] && c.L > 1) {
        std::vector<int64_t> idx(nb + 2, 0);
        for (int64_t j = 0; j < c.S; ++j) {
          idx[nb + 1] = j;
          mask.buf[static_cast<size_t>(mask.offset(idx))] = narrow<T>(static_cast<C>(-INFINITY));
        }
      }
    }
    const std::vector<bool> none(nb + 2, false);
    std::vector<int> plain(nb + 2);
    for (size_t d = 0; d < nb + 2; ++d) plain[d] = static_cast<int>(d);
    out = make_tensor<T>(cat(c.batch, {c.L, c.Ev}), code, plain, none, 0);
    gq = make_tensor<T>(cat(c.batch, {c.L, c.E}), code, plain, none, 0);
    gk = make_tensor<T>(cat(c.batch, {c.S, c.E}), code, plain, none, 0);
    gv = make_tensor<T>(cat(c.batch, {c.S, c.Ev}), code, plain, none, 0);
    lse = make_tensor<C>(cat(c.batch, {c.L}), dtype_code<C>(), std::vector<int>(plain.begin(), plain.end() - 1),
                         std::vector<bool>(nb + 1, false), 0);
    for (auto* t : {&out, &gq, &gk, &gv}) std::fill(t->buf.begin(), t->buf.end(), narrow<T>(static_cast<C>(NAN)));
    std::fill(lse.buf.begin(), lse.buf.end(), static_cast<C>(NAN));
  }

  LoomTensorDesc mask_desc() const {
    if (cfg.mask == MaskKind::Bool) return bmask.desc();
    if (cfg.mask == MaskKind::Additive) return mask.desc();
    LoomTensorDesc d{};
    d.struct_size = sizeof d;
    d.ndim = -1;
    return d;
  }
  // Runs make_problem on descriptors of this case.
  Problem<T> problem(Pass pass) const {
    std::vector<LoomTensorDesc> in, outs;
    if (pass == Pass::Forward) {
      in = {q.desc(), k.desc(), v.desc(), mask_desc()};
      outs = {out.desc(), lse.desc()};
    } else {
      in = {go.desc(), q.desc(), k.desc(), v.desc(), mask_desc(), out.desc(), lse.desc()};
      outs = {gq.desc(), gk.desc(), gv.desc()};
    }
    LoomValue values[2] = {};
    values[0].kind = LOOM_VALUE_BOOL;
    values[0].u.i = cfg.causal;
    values[1].kind = LOOM_VALUE_FLOAT;
    values[1].u.f = scale;
    LoomKernelCall call{};
    call.struct_size = sizeof call;
    call.inputs = in.data();
    call.num_inputs = static_cast<int32_t>(in.size());
    call.outputs = outs.data();
    call.num_outputs = static_cast<int32_t>(outs.size());
    call.values = values;
    call.num_values = 2;
    return make_problem<T>(call, pass);
  }
};

// What attention.cu launches, block by block.
template <class T>
void run_forward(const Problem<T>& p, std::mt19937& rng) {
  using C = opmath_t<T>;
  for (int64_t b = 0; b < forward_blocks(p); ++b) {
    std::vector<C> smem = garbage<C>(ForwardLayout(p.E, p.Ev).total);
    HostTeam<ForwardState<C>> team(rng);
    forward_block(p, b, smem.data(), team);
  }
}
template <class T>
void run_backward(Problem<T> p, std::mt19937& rng) {
  using C = opmath_t<T>;
  std::vector<C> row_dot = garbage<C>(p.batch * p.L);
  p.row_dot = row_dot.data();
  for (int64_t b = 0; b < row_dot_blocks(p); ++b) {
    std::vector<C> smem = garbage<C>(RowDotLayout().total);
    HostTeam<NoState> team(rng);
    row_dot_block(p, b, smem.data(), team);
  }
  for (int64_t b = 0; b < grad_kv_blocks(p); ++b) {
    std::vector<C> smem = garbage<C>(GradKVLayout(p.E, p.Ev).total);
    HostTeam<GradKVState<C>> team(rng);
    grad_kv_block(p, b, smem.data(), team);
  }
  for (int64_t b = 0; b < grad_q_blocks(p); ++b) {
    std::vector<C> smem = garbage<C>(GradQLayout(p.E, p.Ev).total);
    HostTeam<GradQState<C>> team(rng);
    grad_q_block(p, b, smem.data(), team);
  }
}

// Equal as NaN, or within atol + rtol·|want|.
bool near(double got, double want, double tol) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::abs(got - want) <= tol * (1 + std::abs(want));
}

// The float64 reference of one case, checked against what the kernels wrote.
template <class T>
void check_case(const Case<T>& c, double tol) {
  const Config& f = c.cfg;
  const size_t nb = f.batch.size();
  std::vector<int64_t> bi(nb, 0);
  int bad = 0;
  auto expect = [&](double got, double want, const char* what, int64_t a, int64_t d) {
    if (near(got, want, tol) || ++bad > 5) return;
    FAIL_CHECK(what << "[" << a << ", " << d << "]: got " << got << ", want " << want);
  };
  do {
    auto at = [&](std::initializer_list<int64_t> tail) { return cat(bi, tail); };
    const int64_t L = f.L, S = f.S;
    std::vector<double> P(static_cast<size_t>(L * S)), dS(static_cast<size_t>(L * S));
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> s(static_cast<size_t>(S));
      double m = -kInf;
      for (int64_t j = 0; j < S; ++j) {
        double x = 0;
        for (int64_t e = 0; e < f.E; ++e) x += c.q.get(at({i, e})) * c.k.get(at({j, e}));
        x *= c.scale;
        if (f.mask == MaskKind::Additive) x += c.mask.get(at({i, j}));
        if (f.mask == MaskKind::Bool && !c.bmask.buf[static_cast<size_t>(c.bmask.offset(at({i, j})))]) x = -kInf;
        if (f.causal && j > i) x = -kInf;
        s[static_cast<size_t>(j)] = x;
        m = std::max(m, x);
      }
      double sum = 0;
      for (double x : s) sum += m == -kInf ? 0 : std::exp(x - m);
      const double lse = m == -kInf ? -kInf : m + std::log(sum);
      const double got_lse = static_cast<double>(c.lse.buf[static_cast<size_t>(c.lse.offset(at({i})))]);
      expect(got_lse, lse, "lse", i, 0);
      for (int64_t d = 0; d < f.Ev; ++d) {
        double o = 0;
        for (int64_t j = 0; j < S; ++j) o += std::exp(s[static_cast<size_t>(j)] - lse) * c.v.get(at({j, d}));
        expect(c.out.get(at({i, d})), o, "out", i, d);
      }
      // The backward op's inputs are the forward's results as given: P from
      // the kernel's lse, D from its (rounded) output.
      for (int64_t j = 0; j < S; ++j)
        P[static_cast<size_t>(i * S + j)] = std::exp(s[static_cast<size_t>(j)] - got_lse);
      double D = 0;
      for (int64_t d = 0; d < f.Ev; ++d) D += c.go.get(at({i, d})) * c.out.get(at({i, d}));
      for (int64_t j = 0; j < S; ++j) {
        double dp = 0;
        for (int64_t d = 0; d < f.Ev; ++d) dp += c.go.get(at({i, d})) * c.v.get(at({j, d}));
        // Excluded (causal, bool mask) scores get no gradient; additive -inf ones do.
        const bool excluded = (f.causal && j > i) || (f.mask == MaskKind::Bool && !c.bmask.buf[static_cast<size_t>(c.bmask.offset(at({i, j})))]);
        dS[static_cast<size_t>(i * S + j)] = excluded ? 0 : P[static_cast<size_t>(i * S + j)] * (dp - D);
      }
    }
    for (int64_t i = 0; i < L; ++i)
      for (int64_t e = 0; e < f.E; ++e) {
        double g = 0;
        for (int64_t j = 0; j < S; ++j) g += dS[static_cast<size_t>(i * S + j)] * c.k.get(at({j, e}));
        expect(c.gq.get(at({i, e})), g * c.scale, "grad_q", i, e);
      }
    for (int64_t j = 0; j < S; ++j) {
      for (int64_t e = 0; e < f.E; ++e) {
        double g = 0;
        for (int64_t i = 0; i < L; ++i) g += dS[static_cast<size_t>(i * S + j)] * c.q.get(at({i, e}));
        expect(c.gk.get(at({j, e})), g * c.scale, "grad_k", j, e);
      }
      for (int64_t d = 0; d < f.Ev; ++d) {
        double g = 0;
        for (int64_t i = 0; i < L; ++i) g += P[static_cast<size_t>(i * S + j)] * c.go.get(at({i, d}));
        expect(c.gv.get(at({j, d})), g, "grad_v", j, d);
      }
    }
  } while (next_index(bi, f.batch));
}

Config random_config(std::mt19937& rng, uint64_t seed) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  Config c;
  c.batch.resize(static_cast<size_t>(pick(0, 3)));
  for (auto& b : c.batch) b = pick(1, 3);
  c.L = pick(1, 40);
  c.S = pick(1, 70);
  const int64_t dims[] = {1, 7, 16, 32, 33, 64, 100, 128};
  c.E = dims[pick(0, 7)];
  c.Ev = dims[pick(0, 7)];
  const int64_t kind = pick(0, 3);
  c.causal = kind == 3;
  c.mask = kind == 1 ? MaskKind::Bool : kind == 2 ? MaskKind::Additive : MaskKind::None;
  c.transposed = pick(0, 3) == 0;
  c.seed = seed;
  return c;
}

std::string describe(const Config& c) {
  std::string b;
  for (int64_t x : c.batch) b += std::to_string(x) + " ";
  return "batch [" + b + "] L " + std::to_string(c.L) + " S " + std::to_string(c.S) + " E " + std::to_string(c.E) +
         " Ev " + std::to_string(c.Ev) + (c.causal ? " causal" : "") +
         (c.mask == MaskKind::Bool ? " bool mask" : c.mask == MaskKind::Additive ? " float mask" : "") +
         (c.transposed ? " transposed q" : "") + " seed " + std::to_string(c.seed);
}

template <class T>
void run_and_check(const Config& cfg, double tol) {
  std::mt19937 rng(static_cast<uint32_t>(cfg.seed));
  Case<T> c(cfg, rng);
  run_forward(c.problem(Pass::Forward), rng);
  run_backward(c.problem(Pass::Backward), rng);
  check_case(c, tol);
}

}  // namespace

TEST_CASE("the tile algorithm matches a float64 reference (float32 and float64)", "[attention]") {
  std::mt19937 rng(2024);
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Config cfg = random_config(rng, seed);
    INFO(describe(cfg));
    if (seed % 2) run_and_check<float>(cfg, 2e-4);
    else run_and_check<double>(cfg, 1e-10);
  }
}

TEST_CASE("edge shapes: one query, one key, tiles exactly full, causal with L != S", "[attention]") {
  const Config cases[] = {
      {{}, 1, 1, 1, 1, false, MaskKind::None, false, 1},
      {{2}, 32, 64, 32, 32, true, MaskKind::None, false, 2},
      {{}, 16, 5, 8, 4, true, MaskKind::None, false, 3},   // L > S
      {{}, 5, 48, 8, 4, true, MaskKind::None, false, 4},   // L < S: later keys never seen
      {{3, 1}, 17, 33, 128, 128, false, MaskKind::Bool, true, 5},
  };
  for (const Config& cfg : cases) {
    INFO(describe(cfg));
    run_and_check<float>(cfg, 2e-4);
    run_and_check<double>(cfg, 1e-10);
  }
}

TEST_CASE("16-bit inputs compute in float and round once", "[attention]") {
  std::mt19937 rng(7);
  for (uint64_t seed = 100; seed < 106; ++seed) {
    const Config cfg = random_config(rng, seed);
    INFO(describe(cfg));
    // Inputs are exact in both; the results differ by the output rounding.
    run_and_check<__half>(cfg, 4e-3);
    run_and_check<__nv_bfloat16>(cfg, 2e-2);
  }
}

TEST_CASE("make_problem declines what the kernels do not take and rejects broken calls", "[attention]") {
  std::mt19937 rng(3);
  auto status_of = [&](Config cfg, double scale, Pass pass) {
    Case<float> c(cfg, rng);
    if (scale != 0) c.scale = scale;
    try {
      (void)c.problem(pass);
      return 0;
    } catch (const loom::plugin::Failure& f) {
      return static_cast<int>(f.code());
    }
  };
  const Config ok{{2}, 5, 6, 8, 8, false, MaskKind::Bool, false, 1};
  CHECK(status_of(ok, 0, Pass::Forward) == 0);
  CHECK(status_of(ok, 0, Pass::Backward) == 0);
  Config wide = ok;
  wide.E = 129;
  CHECK(status_of(wide, 0, Pass::Forward) == LOOM_STATUS_UNSUPPORTED);
  wide = ok;
  wide.Ev = 200;
  CHECK(status_of(wide, 0, Pass::Backward) == LOOM_STATUS_UNSUPPORTED);
  Config no_keys = ok;
  no_keys.S = 0;
  no_keys.mask = MaskKind::None;
  CHECK(status_of(no_keys, 0, Pass::Forward) == LOOM_STATUS_UNSUPPORTED);
  CHECK(status_of(ok, kInf, Pass::Forward) == LOOM_STATUS_UNSUPPORTED);

  // A logsumexp of the wrong dtype, a mask of another float dtype: the core
  // never sends these.
  Case<float> c(ok, rng);
  c.lse.dtype = LOOM_DTYPE_FLOAT64;
  CHECK_THROWS_WITH(c.problem(Pass::Forward), Catch::Contains("logsumexp must be a float64") ||
                                                  Catch::Contains("logsumexp must be a float32"));
  Case<float> m(Config{{2}, 5, 6, 8, 8, false, MaskKind::Additive, false, 1}, rng);
  m.mask.dtype = LOOM_DTYPE_FLOAT64;
  CHECK_THROWS_WITH(m.problem(Pass::Forward), Catch::Contains("attn_mask must be a float32"));
}

TEST_CASE("a batch walk merges contiguous batch dims and keeps broadcast ones apart", "[attention]") {
  std::mt19937 rng(11);
  Case<float> c(Config{{2, 3, 4}, 5, 6, 8, 8, false, MaskKind::None, false, 1}, rng);
  const Problem<float> p = c.problem(Pass::Forward);
  CHECK(p.batch == 24);
  for (int64_t b = 0; b < 24; ++b) {
    int64_t off[kSlots];
    p.walk.offsets(b, off);
    const std::vector<int64_t> idx = {b / 12, b / 4 % 3, b % 4, 0, 0};
    CHECK(off[kQ] == c.q.offset(idx));
    CHECK(off[kK] == c.k.offset(idx));
    CHECK(off[kOut] == c.out.offset(idx));
    CHECK(off[kLse] == c.lse.offset({idx[0], idx[1], idx[2], 0}));
  }
}
