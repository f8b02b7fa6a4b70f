// nn_module_test.cpp — loom::nn::Module: registration and naming, holders,
// state_dict round trips and strict errors, train/eval, to() identity.
#include "nn_test_util.h"

#include <loom/loom.h>

#include <catch2/catch.hpp>

#include <sstream>

namespace nn = loom::nn;
using loom::Tensor;

namespace {
// A module with a parameter, a buffer and nested submodules.
struct NetImpl : nn::Module {
  NetImpl() : Module("Net") {
    scale = register_parameter("scale", loom::ones({2}));
    steps = register_buffer("steps", loom::zeros({1}, loom::DType::Int64));
    body = register_module("body", nn::Sequential(nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 2)));
    head = register_module("head", std::make_shared<nn::LinearImpl>(nn::LinearOptions(2, 2).bias(false)));
  }
  Tensor forward(const Tensor& x) { return head->forward(body(x)) * scale; }
  Tensor scale, steps;
  nn::Sequential body{nullptr};
  std::shared_ptr<nn::LinearImpl> head;
};
LOOM_MODULE(Net);

std::vector<std::string> names(const nn::NamedTensors& named) {
  std::vector<std::string> out;
  for (const auto& [n, t] : named) out.push_back(n);
  return out;
}
}  // namespace

TEST_CASE("nn: registration names parameters, buffers and children in order") {
  Net net;
  CHECK(names(net->named_parameters()) ==
        std::vector<std::string>{"scale", "body.0.weight", "body.0.bias", "body.2.weight",
                                 "body.2.bias", "head.weight"});
  CHECK(names(net->named_parameters(false)) == std::vector<std::string>{"scale"});
  CHECK(names(net->named_buffers()) == std::vector<std::string>{"steps"});
  CHECK(net->parameters().size() == 6);
  CHECK(net->children().size() == 2);
  CHECK(net->named_children()[0].first == "body");
  std::vector<std::string> module_names;
  for (const auto& [n, m] : net->named_modules()) module_names.push_back(n);
  CHECK(module_names ==
        std::vector<std::string>{"", "body", "body.0", "body.1", "body.2", "head"});
  CHECK(net->modules().size() == 6);
  // The member handle and the registered entry are one tensor.
  CHECK(net->named_parameters()[0].second.is_same(net->scale));
  for (const auto& p : net->parameters()) CHECK(p.requires_grad());
  CHECK_FALSE(net->steps.requires_grad());
}

TEST_CASE("nn: registration rejects bad and duplicate names") {
  nn::Module m("M");
  m.register_parameter("w", loom::ones({1}));
  CHECK_THROWS_WITH(m.register_buffer("w", loom::ones({1})), Catch::Contains("'w' is already registered"));
  CHECK_THROWS_WITH(m.register_parameter("a.b", loom::ones({1})), Catch::Contains("can't contain '.'"));
  CHECK_THROWS_WITH(m.register_parameter("", loom::ones({1})), Catch::Contains("can't be empty"));
  CHECK_THROWS_WITH(m.register_module("c", nn::Linear{nullptr}), Catch::Contains("empty"));
  // An undefined tensor (PyTorch's None) registers nothing.
  m.register_parameter("bias", Tensor());
  CHECK(m.parameters().size() == 1);
  // A non-leaf can't be a parameter.
  auto x = loom::ones({2}).requires_grad_();
  CHECK_THROWS_WITH(m.register_parameter("y", x * 2), Catch::Contains("leaf"));
}

TEST_CASE("nn: holders share one module") {
  nn::Linear a(2, 3);
  nn::Linear b = a;
  CHECK(a.get() == b.get());
  b->weight.detach().fill_(7.0);
  CHECK(a->weight.to_vector<float>()[0] == 7.0f);
  nn::Linear empty{nullptr};
  CHECK(empty.is_empty());
  CHECK_THROWS_WITH(empty->forward(loom::ones({2})), Catch::Contains("empty module holder"));
  empty = a;
  CHECK(empty.get() == a.get());
  nn::Linear no_bias(nn::LinearOptions(64, 256).bias(false));
  CHECK_FALSE(no_bias->bias.defined());
  CHECK(no_bias->weight.shape() == std::vector<int64_t>{256, 64});
  CHECK(no_bias->parameters().size() == 1);
}

TEST_CASE("nn: state_dict has PyTorch's keys and round-trips") {
  loom::manual_seed(1);
  Net a, b;
  auto sd = a->state_dict();
  CHECK(sd.keys() == std::vector<std::string>{"scale", "steps", "body.0.weight", "body.0.bias",
                                              "body.2.weight", "body.2.bias", "head.weight"});
  // Entries share memory with the module but are outside the graph.
  CHECK_FALSE(sd.at("scale").requires_grad());
  a->steps.fill_(5);
  CHECK(sd.at("steps").item<int64_t>() == 5);

  b->load_state_dict(sd);
  for (const auto& [key, t] : b->state_dict())
    CHECK(nn_test::same_values(t, sd.at(key)));
  // Loading copies: the module keeps its own tensors (and their identity).
  CHECK_FALSE(b->scale.storage().get() == a->scale.storage().get());
  CHECK(b->scale.requires_grad());
  auto x = loom::rand({5, 3});
  nn_test::check_close(a(x), b(x));
}

TEST_CASE("nn: load_state_dict names missing, unexpected and mismatched keys") {
  Net net;
  auto sd = net->state_dict();
  sd.erase("body.0.bias");
  sd.insert("extra.weight", loom::ones({1}));
  CHECK_THROWS_WITH(net->load_state_dict(sd),
                    Catch::Contains("Missing key(s): \"body.0.bias\"") &&
                        Catch::Contains("Unexpected key(s): \"extra.weight\""));
  // Non-strict loads what matches.
  auto before = net->body->at<nn::LinearImpl>(0)->bias.clone();
  sd.at("scale").fill_(3.0);
  net->load_state_dict(sd, /*strict=*/false);
  CHECK(net->scale.to_vector<float>() == std::vector<float>{3.0f, 3.0f});
  CHECK(nn_test::same_values(net->body->at<nn::LinearImpl>(0)->bias, before));

  auto bad = net->state_dict();
  bad.insert("head.weight", loom::ones({3, 2}));
  CHECK_THROWS_WITH(net->load_state_dict(bad),
                    Catch::Contains("size mismatch for 'head.weight'") && Catch::Contains("[3, 2]"));
  bad = net->state_dict();
  bad.insert("scale", loom::ones({2}, loom::DType::Float64));
  CHECK_THROWS_WITH(net->load_state_dict(bad),
                    Catch::Contains("dtype mismatch for 'scale'") && Catch::Contains("float64"));
}

TEST_CASE("nn: to(dtype) converts in place and keeps parameter identity") {
  Net net;
  auto params = net->parameters();
  auto x = loom::rand({4, 3});
  net(x).sum().backward();
  REQUIRE(net->scale.grad().defined());
  net->to(loom::DType::Float64);
  for (size_t i = 0; i < params.size(); ++i) {
    CHECK(params[i].dtype() == loom::DType::Float64);
    CHECK(params[i].is_same(net->parameters()[i]));
    CHECK(params[i].requires_grad());
  }
  CHECK(net->scale.grad().dtype() == loom::DType::Float64);
  CHECK(net->steps.dtype() == loom::DType::Int64);  // integer buffers keep their dtype
  // Gradients still reach the (same) parameters after the cast.
  net->zero_grad();
  CHECK_FALSE(params[0].grad().defined());
  net(x.to(loom::DType::Float64)).sum().backward();
  for (const auto& p : params) {
    REQUIRE(p.grad().defined());
    CHECK(p.grad().dtype() == loom::DType::Float64);
  }
  net->zero_grad(/*set_to_none=*/false);
  CHECK(nn_test::values(params[0].grad()) == std::vector<double>{0.0, 0.0});
  CHECK_THROWS_WITH(net->to(loom::DType::Int32), Catch::Contains("floating-point"));
}

TEST_CASE("nn: to(device) moves parameters and buffers in place") {
  Net net;
  auto w = net->head->weight;
  net->to(loom::Device("sim"));
  CHECK(w.device().str() == "sim:0");
  CHECK(net->steps.device().str() == "sim:0");
  CHECK(net(loom::rand({2, 3}, loom::DType::Float32, "sim")).device().str() == "sim:0");
  net->to(loom::Device("cpu"));
  CHECK(w.device().str() == "cpu:0");
}

TEST_CASE("nn: train and eval reach every submodule; apply visits children first") {
  Net net;
  CHECK(net->is_training());
  net->eval();
  for (const auto& m : net->modules()) CHECK_FALSE(m->is_training());
  net->train();
  for (const auto& m : net->modules()) CHECK(m->is_training());
  std::vector<std::string> order;
  net->apply([&](nn::Module& m) { order.push_back(m.name()); });
  CHECK(order == std::vector<std::string>{"Linear", "ReLU", "Linear", "Sequential", "Linear", "Net"});
}

TEST_CASE("nn: modules print like PyTorch") {
  nn::Sequential seq(nn::Linear(2, 3), nn::ReLU(), nn::Linear(nn::LinearOptions(3, 1).bias(false)));
  std::ostringstream os;
  os << seq;
  CHECK(os.str() ==
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Linear(in_features=3, out_features=1, bias=False)\n"
        ")");
}
