// serialize_test.cpp — loom::save / loom::load and the archives
// (loom/serialize.h): round trips of modules, tensors, lists, optimizers
// and nested archives through files and streams, and the errors a wrong
// file gets. That PyTorch reads these files and loom reads PyTorch's is
// serialize_torch_crosscheck.py's job.
#include "nn_test_util.h"

#include <loom/loom.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace nn = loom::nn;
using loom::Tensor;
using nn_test::pattern;

namespace {
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("loom_serialize_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}
nn::Sequential make_model() { return nn::Sequential(nn::Linear(3, 4), nn::BatchNorm1d(4), nn::ReLU()); }
}  // namespace

TEST_CASE("serialize: a module round-trips its parameters and buffers") {
  nn::Sequential model = make_model();
  nn_test::fill_params(*model);
  model->forward(pattern({5, 3}, 1));  // moves BatchNorm's running stats
  const std::string path = temp_path("model.pt");
  loom::save(model, path);

  nn::Sequential fresh = make_model();
  loom::load(fresh, path);
  model->eval();
  fresh->eval();
  nn_test::check_close(fresh->forward(pattern({2, 3}, 2)), model->forward(pattern({2, 3}, 2)), 0, 0);
  const auto saved = model->state_dict(), loaded = fresh->state_dict();
  for (const auto& [key, t] : saved) {
    INFO(key);
    CHECK(nn_test::same_values(*loaded.find(key), t));
  }
  // The shared_ptr spelling, and a module of another shape is refused by name.
  auto linear = std::make_shared<nn::LinearImpl>(3, 5);
  CHECK_THROWS_WITH(loom::load(linear, path), Catch::Contains("'weight'"));
  std::filesystem::remove(path);
}

TEST_CASE("serialize: tensors and lists of tensors round-trip through files and streams") {
  const Tensor a = loom::arange(12, loom::kDouble).reshape({3, 4}).t();  // non-contiguous
  const Tensor b = loom::tensor(std::vector<int64_t>{7, -1, 3});
  const Tensor c = loom::ones({2, 2}, loom::kHalf);
  std::stringstream stream;
  loom::save(a, stream);
  Tensor a2;
  loom::load(a2, stream);
  CHECK(a2.dtype() == loom::kDouble);
  CHECK(nn_test::same_values(a2, a));

  const std::string path = temp_path("list.pt");
  loom::save(std::vector<Tensor>{a, b, c}, path);
  std::vector<Tensor> list;
  loom::load(list, path);
  REQUIRE(list.size() == 3);
  CHECK(list[1].dtype() == loom::kLong);
  CHECK(list[2].dtype() == loom::kHalf);
  CHECK(nn_test::same_values(list[1], b));
  Tensor one;
  CHECK_THROWS_WITH(loom::load(one, path), Catch::Contains("one tensor") && Catch::Contains("holds 3"));
  std::filesystem::remove(path);
}

TEST_CASE("serialize: an optimizer's state round-trips, so training resumes exactly") {
  auto run = [](nn::Linear& model, loom::optim::Adam& opt, int steps) {
    for (int i = 0; i < steps; ++i) {
      opt.zero_grad();
      model(pattern({4, 3}, i)).pow(2).sum().backward();
      opt.step();
    }
  };
  nn::Linear model(3, 2);
  nn_test::fill_params(*model);
  loom::optim::Adam opt(model->parameters(), loom::optim::AdamOptions(0.01).betas({0.8, 0.9}));
  run(model, opt, 3);
  const std::string model_path = temp_path("m.pt"), opt_path = temp_path("opt.pt");
  loom::save(model, model_path);
  loom::save(opt, opt_path);
  run(model, opt, 2);

  nn::Linear resumed(3, 2);
  loom::optim::Adam opt2(resumed->parameters(), loom::optim::AdamOptions(0.5));
  loom::load(resumed, model_path);
  loom::load(opt2, opt_path);
  CHECK(opt2.param_groups()[0].options().get_lr() == 0.01);
  run(resumed, opt2, 2);
  nn_test::check_close(resumed->weight, model->weight, 0, 0);
  std::filesystem::remove(model_path);
  std::filesystem::remove(opt_path);
}

TEST_CASE("serialize: archives nest and hold numbers; a missing key is named") {
  loom::serialize::OutputArchive inner, out;
  inner.write("w", loom::ones({2}));
  out.write("encoder", inner);
  out.write("step", int64_t{41});
  out.write("lr", 0.25);
  out.write("done", true);
  std::stringstream stream;
  out.save_to(stream);

  loom::serialize::InputArchive in;
  in.load_from(stream);
  CHECK(in.keys() == std::vector<std::string>{"encoder.w", "step", "lr", "done"});
  loom::serialize::InputArchive encoder;
  in.read("encoder", encoder);
  Tensor w;
  encoder.read("w", w);
  CHECK(nn_test::values(w) == std::vector<double>{1, 1});
  int64_t step = 0;
  double lr = 0;
  bool done = false;
  in.read("step", step);
  in.read("lr", lr);
  in.read("done", done);
  CHECK(step == 41);
  CHECK(lr == 0.25);
  CHECK(done);
  Tensor missing;
  CHECK_FALSE(encoder.try_read("bias", missing));
  CHECK_THROWS_WITH(encoder.read("bias", missing), Catch::Contains("encoder.bias") && Catch::Contains("w"));
  // A defined tensor keeps its identity and takes the values.
  Tensor target = loom::zeros({2});
  const auto* impl = target.impl();
  encoder.read("w", target);
  CHECK(target.impl() == impl);
  CHECK(nn_test::values(target) == std::vector<double>{1, 1});
}

TEST_CASE("serialize: a file that is not a checkpoint is refused by name") {
  const std::string path = temp_path("garbage.pt");
  std::ofstream(path) << "not a zip archive";
  Tensor t;
  CHECK_THROWS_WITH(loom::load(t, path), Catch::Contains(path));
  std::filesystem::remove(path);
  CHECK_THROWS_WITH(loom::load(t, path), Catch::Contains(path));
}
