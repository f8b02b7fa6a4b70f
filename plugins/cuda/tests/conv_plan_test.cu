// The cuDNN convolutions' planning (kernels/conv_plan.hpp) on the host:
// output sizes in floor mode and with output_padding, which problems cuDNN
// is given, descriptor strides, filter layouts, the cache key and the LRU.
// Also how each op's call (kernels/conv_call.hpp) becomes a pass. Built by
// nvcc as a host program; needs neither a GPU nor cuDNN.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "kernels/conv_call.hpp"
#include "kernels/conv_plan.hpp"

#include <string>

using namespace loom::cuda::conv;

namespace {

Dims4 packed(int64_t n, int64_t c, int64_t h, int64_t w) { return {{n, c, h, w}, {c * h * w, h * w, w, 1}}; }
Dims4 channels_last(int64_t n, int64_t c, int64_t h, int64_t w) {
  return {{n, c, h, w}, {h * w * c, 1, w * c, c}};
}

// A forward problem x [N, C, H, W] * w [O, C/g, k, k] with the output size
// the forward gives.
Problem forward(int64_t N, int64_t C, int64_t H, int64_t W, int64_t O, int64_t k, int64_t s, int64_t p, int64_t d,
                int64_t g) {
  Problem pr;
  pr.groups = g;
  for (int i = 0; i < 2; ++i) {
    pr.stride[i] = s;
    pr.padding[i] = p;
    pr.dilation[i] = d;
  }
  pr.x = packed(N, C, H, W);
  pr.w = packed(O, C / g, k, k);
  pr.y = packed(N, O, forward_output_size(H, k, s, p, d), forward_output_size(W, k, s, p, d));
  return pr;
}

}  // namespace

TEST_CASE("forward output sizes use floor mode", "[conv]") {
  CHECK(forward_output_size(7, 3, 2, 1, 1) == 4);  // (7 + 2 - 2 - 1) / 2 + 1
  CHECK(forward_output_size(8, 3, 2, 0, 1) == 3);  // the last input row is never read
  CHECK(forward_output_size(5, 3, 1, 0, 2) == 1);  // dilated kernel spans exactly 5
  CHECK(forward_output_size(4, 3, 1, 0, 2) == 0);  // longer than the input
  CHECK(forward_output_size(1, 1, 1, 0, 1) == 1);  // conv1d's height
}

TEST_CASE("transposed sizes invert the forward while output_padding < stride", "[conv]") {
  for (int64_t in = 1; in <= 6; ++in)
    for (int64_t k = 1; k <= 4; ++k)
      for (int64_t s = 1; s <= 3; ++s)
        for (int64_t d = 1; d <= 3; ++d)
          for (int64_t p = 0; p <= (d * (k - 1)) / 2; ++p)
            for (int64_t op = 0; op < std::max(s, d); ++op) {
              const int64_t out = transposed_output_size(in, k, s, p, d, op);
              if (out < 1) continue;
              INFO("in " << in << " k " << k << " s " << s << " d " << d << " p " << p << " op " << op);
              // PyTorch allows output_padding < max(stride, dilation); the
              // forward from the larger output gives `in` back only below stride.
              CHECK((forward_output_size(out, k, s, p, d) == in) == (op < s));
            }
  CHECK(transposed_output_size(3, 3, 2, 1, 1, 1) == 6);  // (3 - 1) 2 - 2 + 2 + 1 + 1
}

TEST_CASE("cuDNN gets consistent problems and is spared the rest", "[conv]") {
  CHECK(decline_reason(forward(2, 4, 9, 7, 6, 3, 2, 1, 1, 2)) == nullptr);
  CHECK(decline_reason(forward(1, 3, 1, 10, 5, 1, 1, 0, 1, 1)) == nullptr);

  SECTION("a shortened grad_output (conv_transpose2d's weight gradient)") {
    Problem p = forward(2, 4, 9, 9, 6, 3, 2, 0, 1, 1);
    p.pass = Pass::BackwardFilter;
    p.y.size[2] -= 1;
    const char* why = decline_reason(p);
    REQUIRE(why != nullptr);
    CHECK(std::string(why).find("output size") != std::string::npos);
  }
  SECTION("output_padding >= stride (transposed, dilation 3)") {
    Problem p = forward(1, 2, 5, 5, 2, 2, 1, 0, 3, 1);
    p.pass = Pass::BackwardData;
    p.x = packed(1, 2, transposed_output_size(p.y.size[2], 2, 1, 0, 3, 1), p.x.size[3]);
    CHECK(decline_reason(p) != nullptr);
  }
  SECTION("groups that do not divide the channels") {
    Problem p = forward(1, 4, 5, 5, 6, 3, 1, 1, 1, 2);
    p.w.size[1] = 3;
    CHECK(decline_reason(p) != nullptr);
    Problem q = forward(1, 4, 5, 5, 6, 3, 1, 1, 1, 1);
    q.groups = 0;
    CHECK(decline_reason(q) != nullptr);
  }
  SECTION("sizes past int") {
    Problem p = forward(1, 1, 5, 5, 1, 1, 1, 0, 1, 1);
    p.x.stride[0] = int64_t{1} << 31;
    CHECK(std::string(decline_reason(p)).find("int range") != std::string::npos);
  }
}

TEST_CASE("size-1 dims get packed strides in descriptors", "[conv]") {
  const Dims4 t = tidy({{1, 3, 1, 5}, {999, 5, 77, 1}});
  CHECK(t.stride[0] == 15);
  CHECK(t.stride[1] == 5);
  CHECK(t.stride[2] == 5);
  CHECK(t.stride[3] == 1);
  const Dims4 nhwc = tidy(channels_last(2, 3, 4, 5));
  CHECK(nhwc.stride[1] == 1);
  CHECK(nhwc.stride[3] == 3);
}

TEST_CASE("broadcast or reversed dims are copied before cuDNN reads them", "[conv]") {
  CHECK(readable_as_strided(packed(2, 3, 4, 5)));
  CHECK(readable_as_strided({{1, 3, 4, 5}, {0, 20, 5, 1}}));   // size-1 dim: any stride
  CHECK_FALSE(readable_as_strided({{2, 3, 4, 5}, {0, 20, 5, 1}}));  // expanded batch
  CHECK_FALSE(readable_as_strided({{1, 3, 4, 5}, {60, 20, -5, 1}}));  // flipped rows
}

TEST_CASE("filters are packed NCHW or NHWC, else copied", "[conv]") {
  CHECK(filter_layout(packed(8, 3, 3, 3)) == FilterLayout::NCHW);
  CHECK(filter_layout(channels_last(8, 3, 3, 3)) == FilterLayout::NHWC);
  CHECK(filter_layout({{8, 3, 1, 5}, {15, 5, 123, 1}}) == FilterLayout::NCHW);  // conv1d weight view
  CHECK(filter_layout({{8, 3, 3, 3}, {1, 72, 24, 8}}) == FilterLayout::None);   // O innermost
  CHECK(filter_layout({{8, 3, 3, 3}, {54, 9, 3, 1}}) == FilterLayout::None);    // padded rows
}

TEST_CASE("the cache key separates what the heuristics see", "[conv]") {
  const Problem a = forward(2, 4, 9, 7, 6, 3, 2, 1, 1, 2);
  Problem b = a;
  CHECK(cache_key(a, 0, 0) == cache_key(b, 0, 0));
  CHECK(cache_key(a, 0, 0) != cache_key(b, 1, 0));  // device
  CHECK(cache_key(a, 0, 0) != cache_key(b, 0, 3));  // math
  b.x = channels_last(2, 4, 9, 7);
  CHECK(cache_key(a, 0, 0) != cache_key(b, 0, 0));
  b = a;
  b.pass = Pass::BackwardData;
  CHECK(cache_key(a, 0, 0) != cache_key(b, 0, 0));
  // A size-1 dim's stride does not matter.
  Problem one = forward(1, 4, 9, 7, 6, 3, 2, 1, 1, 2), other = one;
  other.x.stride[0] = 12345;
  CHECK(cache_key(one, 0, 0) == cache_key(other, 0, 0));
}

TEST_CASE("the LRU builds once per key and evicts the least recently used", "[conv]") {
  LruCache<int> cache(2);
  int builds = 0;
  auto make = [&](int v) {
    return [&builds, v] {
      ++builds;
      return v;
    };
  };
  CHECK(*cache.get({1}, make(10)) == 10);
  CHECK(*cache.get({2}, make(20)) == 20);
  CHECK(*cache.get({1}, make(99)) == 10);  // hit: 1 is now the most recent
  CHECK(builds == 2);
  CHECK(*cache.get({3}, make(30)) == 30);  // evicts 2
  CHECK(cache.size() == 2);
  CHECK(*cache.get({1}, make(99)) == 10);
  CHECK(*cache.get({2}, make(21)) == 21);  // rebuilt
  CHECK(builds == 4);
  // A failed build caches nothing.
  CHECK_THROWS(cache.get({4}, [] () -> int { throw 1; }));
  CHECK(*cache.get({4}, make(40)) == 40);
}

// ---- calls: which tensor is x, w, y and where the values are ----

namespace {

// A contiguous float32 4-D view of `shape` (no data: planning only).
struct View {
  int64_t shape[4], strides[4];
  LoomTensorDesc desc{};
  explicit View(std::initializer_list<int64_t> s) {
    int i = 0;
    for (int64_t v : s) shape[i++] = v;
    int64_t extent = 1;
    for (int d = 3; d >= 0; --d) {
      strides[d] = extent;
      extent *= shape[d];
    }
    desc.ndim = 4;
    desc.dtype = LOOM_DTYPE_FLOAT32;
    desc.shape = shape;
    desc.strides = strides;
  }
};

LoomValue pair(const int64_t* two) {
  LoomValue v{};
  v.kind = LOOM_VALUE_INT_LIST;
  v.u.ints.data = two;
  v.u.ints.size = 2;
  return v;
}
LoomValue integer(int64_t i) {
  LoomValue v{};
  v.kind = LOOM_VALUE_INT;
  v.u.i = i;
  return v;
}

bool same(const Dims4& a, const LoomTensorDesc& t) {
  for (int i = 0; i < 4; ++i)
    if (a.size[i] != t.shape[i] || a.stride[i] != t.strides[i]) return false;
  return true;
}

}  // namespace

TEST_CASE("conv_transpose2d reads dilation after groups and runs as backward data", "[conv]") {
  // PyTorch: input [2, 4, 5, 5], weight [4, 3, 3, 3] (groups 1), stride 2,
  // padding 1, output_padding 1, dilation 1: output (5 - 1) 2 - 2 + 2 + 1 + 1 = 10.
  View in({2, 4, 5, 5}), weight({4, 3, 3, 3}), out({2, 3, 10, 10});
  LoomTensorDesc inputs[3] = {in.desc, weight.desc, {}};
  inputs[2].ndim = -1;
  const int64_t stride[2] = {2, 2}, padding[2] = {1, 1}, output_padding[2] = {1, 1}, dilation[2] = {1, 1};
  const LoomValue values[5] = {pair(stride), pair(padding), pair(output_padding), integer(1), pair(dilation)};
  LoomKernelCall c{};
  c.inputs = inputs;
  c.num_inputs = 3;
  c.outputs = &out.desc;
  c.num_outputs = 1;
  c.values = values;
  c.num_values = 5;
  const Problem p = read_problem(c, ConvOp::ConvTranspose2d);
  CHECK(p.pass == Pass::BackwardData);
  CHECK(same(p.x, out.desc));
  CHECK(same(p.w, weight.desc));
  CHECK(same(p.y, in.desc));
  CHECK(p.stride[0] == 2);
  CHECK(p.padding[1] == 1);
  CHECK(p.dilation[0] == 1);
  CHECK(p.groups == 1);
  CHECK(decline_reason(p) == nullptr);

  // output_padding 2 with dilation 3 (allowed by PyTorch: < dilation) is not
  // what backward data computes: declined.
  View wide({2, 3, 2 * 4 - 2 + 3 * 2 + 2 + 1, 2 * 4 - 2 + 3 * 2 + 2 + 1});
  const int64_t dilated[2] = {3, 3}, output_padding2[2] = {2, 2};
  const LoomValue values2[5] = {pair(stride), pair(padding), pair(output_padding2), integer(1), pair(dilated)};
  c.values = values2;
  c.outputs = &wide.desc;
  CHECK(decline_reason(read_problem(c, ConvOp::ConvTranspose2d)) != nullptr);
}

TEST_CASE("the gradient ops read (size, stride, padding, dilation, groups)", "[conv]") {
  // Forward: x [2, 4, 8, 8], w [6, 2, 3, 3], groups 2, stride 2, padding 1,
  // dilation 1 -> y [2, 6, 4, 4].
  View x({2, 4, 8, 8}), w({6, 2, 3, 3}), dy({2, 6, 4, 4});
  const int64_t size[2] = {8, 8}, kernel[2] = {3, 3}, stride[2] = {2, 2}, padding[2] = {1, 1}, dilation[2] = {1, 1};
  LoomKernelCall c{};
  c.num_inputs = 2;
  c.num_outputs = 1;
  c.num_values = 5;

  const LoomValue data_values[5] = {pair(size), pair(stride), pair(padding), pair(dilation), integer(2)};
  const LoomTensorDesc data_inputs[2] = {dy.desc, w.desc};
  c.inputs = data_inputs;
  c.outputs = &x.desc;
  c.values = data_values;
  const Problem data = read_problem(c, ConvOp::BackwardInput);
  CHECK(data.pass == Pass::BackwardData);
  CHECK((same(data.x, x.desc) && same(data.w, w.desc) && same(data.y, dy.desc)));
  CHECK(data.groups == 2);
  CHECK(decline_reason(data) == nullptr);

  const LoomValue weight_values[5] = {pair(kernel), pair(stride), pair(padding), pair(dilation), integer(2)};
  const LoomTensorDesc weight_inputs[2] = {dy.desc, x.desc};
  c.inputs = weight_inputs;
  c.outputs = &w.desc;
  c.values = weight_values;
  const Problem filter = read_problem(c, ConvOp::BackwardWeight);
  CHECK(filter.pass == Pass::BackwardFilter);
  CHECK((same(filter.x, x.desc) && same(filter.w, w.desc) && same(filter.y, dy.desc)));
  CHECK(decline_reason(filter) == nullptr);

  // A grad_output one row short (conv_transpose2d's weight gradient): declined.
  View short_dy({2, 6, 3, 4});
  const LoomTensorDesc short_inputs[2] = {short_dy.desc, x.desc};
  c.inputs = short_inputs;
  CHECK(decline_reason(read_problem(c, ConvOp::BackwardWeight)) != nullptr);
}

TEST_CASE("malformed calls name the op and what is wrong", "[conv]") {
  View x({1, 2, 5, 5}), w({3, 2, 3, 3}), y({1, 3, 3, 3});
  LoomTensorDesc inputs[3] = {x.desc, w.desc, {}};
  inputs[2].ndim = -1;
  const int64_t one[2] = {1, 1}, zero[2] = {0, 0};
  const LoomValue values[4] = {pair(one), pair(zero), pair(one), integer(1)};
  LoomKernelCall c{};
  c.inputs = inputs;
  c.num_inputs = 3;
  c.outputs = &y.desc;
  c.num_outputs = 1;
  c.values = values;
  c.num_values = 4;
  CHECK(decline_reason(read_problem(c, ConvOp::Conv2d)) == nullptr);

  inputs[1].dtype = LOOM_DTYPE_FLOAT16;
  CHECK_THROWS_WITH(read_problem(c, ConvOp::Conv2d), Catch::Contains("conv2d") && Catch::Contains("float16"));
  inputs[1].dtype = LOOM_DTYPE_FLOAT32;
  const LoomValue bad[4] = {pair(one), integer(0), pair(one), integer(1)};
  c.values = bad;
  CHECK_THROWS_WITH(read_problem(c, ConvOp::Conv2d), Catch::Contains("padding"));
  c.values = values;
  c.num_values = 3;
  CHECK_THROWS_WITH(read_problem(c, ConvOp::Conv2d), Catch::Contains("groups"));
}
