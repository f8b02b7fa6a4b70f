// loom/serialize/archive.h — OutputArchive and InputArchive: named tensors
// (and nested archives) written to and read from one file, as libtorch's
// torch::serialize archives. loom::save / loom::load (loom/serialize.h) are
// built on them.
//
//   loom::serialize::OutputArchive out;
//   out.write("step", loom::tensor(int64_t{10}));
//   model->save(out);                  // or out.write("model", nested)
//   out.save_to("checkpoint.pt");
//   loom::serialize::InputArchive in;
//   in.load_from("checkpoint.pt");
//   loom::Tensor step;  in.read("step", step);
//
// The file is PyTorch's checkpoint format (loom/io.h, save_torch): a zip
// whose pickled object is an OrderedDict of "nested.key" -> tensor, so
// Python's torch.load and loom.load read it as a state dict. (libtorch's
// archives are TorchScript files instead; loom neither writes nor reads
// those.)
#pragma once

#include <loom/device.h>
#include <loom/io.h>
#include <loom/state_dict.h>
#include <loom/tensor.h>

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace loom::serialize {

class OutputArchive {
 public:
  // `tensor` under `key` (is_buffer is accepted for libtorch's signature).
  void write(const std::string& key, const Tensor& tensor, bool is_buffer = false);
  // Every entry of `nested` under "key.".
  void write(const std::string& key, const OutputArchive& nested);
  // A number, as a 0-d float64 / int64 / bool tensor.
  void write(const std::string& key, double value);
  void write(const std::string& key, int64_t value);
  void write(const std::string& key, bool value);

  // The archive as a file, into a stream, or through `writer` (which
  // returns how many bytes it took; fewer is an error).
  void save_to(const std::string& filename) const;
  void save_to(std::ostream& stream) const;
  void save_to(const std::function<size_t(const void*, size_t)>& writer) const;

  const StateDict& entries() const { return entries_; }
  // What the file's object is: a dict (the default), or, for
  // loom::save(tensor) and loom::save(vector), a tensor or a list.
  void set_top_level(io::TorchTopLevel top) { top_ = top; }

 private:
  StateDict entries_;
  io::TorchTopLevel top_ = io::TorchTopLevel::Dict;
};

class InputArchive {
 public:
  // Reads a torch.save file (written by loom or by PyTorch); the tensors go
  // to `device` (the CPU when absent).
  void load_from(const std::string& filename, std::optional<Device> device = std::nullopt);
  void load_from(std::istream& stream, std::optional<Device> device = std::nullopt);
  void load_from(const char* data, size_t size, std::optional<Device> device = std::nullopt);

  // The tensor under `key` into `tensor`: a defined tensor keeps its
  // identity and device and takes the stored values and shape (as
  // set_data); an undefined one becomes the stored tensor. false / an error
  // naming the key (and the keys there are) when absent.
  bool try_read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  void read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  // The entries under "key." as an archive of their own.
  bool try_read(const std::string& key, InputArchive& nested);
  void read(const std::string& key, InputArchive& nested);
  void read(const std::string& key, double& value);
  void read(const std::string& key, int64_t& value);
  void read(const std::string& key, bool& value);

  std::vector<std::string> keys() const { return entries_.keys(); }
  const StateDict& entries() const { return entries_; }

 private:
  const Tensor& number(const std::string& key) const;
  StateDict entries_;
  std::string source_ = "<archive>";  // the file, for errors
  std::string prefix_;                // this archive's place in its file, for errors
};

}  // namespace loom::serialize
