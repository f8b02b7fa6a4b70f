// The gradients of view ops stay views or land in one buffer (issue 22,
// part 5): a transpose's or a reshape's backward dispatches no op at all,
// and split's pieces share one node whose backward is one cat — not a
// zero-filled copy of the base per piece, summed. The counts are of
// dispatcher calls, so they hold on any device.
#include <loom/autograd.h>
#include <loom/dispatch_trace.h>
#include <loom/loom.h>

#include <catch2/catch.hpp>

#include <map>
#include <string>

namespace {

using loom::Tensor;

// Op name -> calls, over everything dispatched while `fn` ran.
template <class F>
std::map<std::string, int> calls_during(F&& fn) {
  loom::DispatchTrace trace;
  fn();
  std::map<std::string, int> n;
  for (const auto& e : trace.events())
    if (e.op) ++n[e.op->name()];
  return n;
}

}  // namespace

TEST_CASE("a permuting or reordering view's gradient is the gradient rearranged, with no op", "[autograd]") {
  const Tensor x = loom::randn({4, 6, 5}).requires_grad_();
  const Tensor g = loom::randn({6, 5, 4});
  const Tensor y = x.permute({1, 2, 0});
  const auto ops = calls_during([&] { (void)loom::autograd::grad({y}, {x}, {g}); });
  CHECK(ops.empty());
  const Tensor gx = loom::autograd::grad({y}, {x}, {g})[0];
  CHECK(loom::allclose(gx, g.permute({2, 0, 1})));
  // A view of a strided (non-contiguous) input in its element order.
  const Tensor base = loom::randn({3, 8}).requires_grad_();
  const Tensor cols = base.narrow(1, 2, 4);         // [3, 4], strides (8, 1)
  const Tensor v = cols.unsqueeze(1).view({3, 1, 2, 2});
  const Tensor gv = loom::randn({3, 1, 2, 2});
  const Tensor gc = loom::autograd::grad({v}, {cols}, {gv})[0];
  CHECK(loom::allclose(gc, gv.reshape({3, 4})));
}

TEST_CASE("the attention block's qkv reshuffle: backward is reshapes and one cat", "[autograd]") {
  // GPT's split -> view -> transpose -> contiguous, for q, k and v.
  const Tensor qkv = loom::randn({2, 5, 3 * 8}).requires_grad_();
  const auto parts = loom::split(qkv, 8, 2);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].grad_fn()->name() == "SplitBackward0");
  CHECK(parts[0].grad_fn().get() == parts[2].grad_fn().get());  // one node for the three
  std::vector<Tensor> heads;
  for (const Tensor& p : parts) heads.push_back(p.view({2, 5, 2, 4}).transpose(1, 2).contiguous());
  // Each head gets its own slice of one gradient (a sum would send the
  // same one to all three).
  const Tensor out = loom::cat(heads, 3);
  const Tensor g = loom::randn(out.sizes());
  std::vector<Tensor> grads;
  auto ops = calls_during([&] { grads = loom::autograd::grad({out}, {qkv}, {g}); });
  ops.erase("narrow");  // cat's own backward: a view per head
  // One cat builds the base's gradient; each piece's gradient is at most one
  // copy (the reshape of its transposed gradient); nothing is zero-filled
  // or summed.
  CHECK(ops["cat"] == 1);
  CHECK(ops["fill_"] == 0);
  CHECK(ops["add"] == 0);
  CHECK(ops["copy_"] <= 3);
  // And the values: head i's slice of g, back in qkv's layout.
  std::vector<Tensor> back;
  for (int64_t i = 0; i < 3; ++i) back.push_back(g.narrow(3, 4 * i, 4).transpose(1, 2).reshape({2, 5, 8}));
  const Tensor expect = loom::cat(back, 2);
  CHECK(loom::allclose(grads[0], expect));
}

TEST_CASE("split, chunk and unbind: a piece without a gradient contributes zeros", "[autograd]") {
  const Tensor x = loom::randn({6, 3}).requires_grad_();
  const auto pieces = loom::chunk(x, 3, 0);
  const Tensor gx = loom::autograd::grad({pieces[1]}, {x}, {loom::ones({2, 3})}).at(0);
  CHECK(loom::allclose(gx.narrow(0, 0, 2), loom::zeros({2, 3})));
  CHECK(loom::allclose(gx.narrow(0, 2, 2), loom::ones({2, 3})));
  CHECK(loom::allclose(gx.narrow(0, 4, 2), loom::zeros({2, 3})));
  const auto rows = loom::unbind(x, 1);
  CHECK(rows[0].grad_fn()->name() == "UnbindBackward0");
  const Tensor gu = loom::autograd::grad({rows[2]}, {x}, {loom::full({6}, 2.0)})[0];
  CHECK(loom::allclose(gu.select(1, 2), loom::full({6}, 2.0)));
  CHECK(loom::allclose(gu.select(1, 0), loom::zeros({6})));
}
