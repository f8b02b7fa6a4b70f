// loom/nn/utils/rnn.h — packed sequences (torch::nn::utils::rnn): a batch
// of sequences of different lengths as one tensor of their time steps'
// rows, longest sequence first, batch_sizes[t] rows at step t.
//
//   namespace rnn_utils = loom::nn::utils::rnn;
//   auto packed = rnn_utils::pack_padded_sequence(padded, lengths, /*batch_first=*/true,
//                                                 /*enforce_sorted=*/false);
//   auto [out, state] = lstm->forward_with_packed_input(packed);
//   auto [unpacked, out_lengths] = rnn_utils::pad_packed_sequence(out, /*batch_first=*/true);
//
// Packing and unpacking are one index_select / index_add each, so both are
// differentiable and run on any device; the recurrent layers hand the
// packed data and batch_sizes straight to the fused _rnn op.
#pragma once

#include <loom/tensor.h>

#include <optional>
#include <tuple>
#include <vector>

namespace loom::nn::utils::rnn {

class PackedSequence {
 public:
  PackedSequence() = default;
  // data [sum(batch_sizes), *]; batch_sizes int64 on the CPU; sorted_indices:
  // the batch order by decreasing length (undefined when given sorted), and
  // unsorted_indices its inverse (computed when undefined).
  PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices = {}, Tensor unsorted_indices = {});

  const Tensor& data() const { return data_; }
  const Tensor& batch_sizes() const { return batch_sizes_; }
  const Tensor& sorted_indices() const { return sorted_indices_; }
  const Tensor& unsorted_indices() const { return unsorted_indices_; }
  bool is_cuda() const { return data_.is_cuda(); }
  // The same sequence with its data (and index tensors) on `device`.
  PackedSequence to(const Device& device) const;

 private:
  Tensor data_, batch_sizes_, sorted_indices_, unsorted_indices_;
};

// Packs a padded batch [T, N, *] ([N, T, *] with batch_first) whose
// sequences have `lengths` (a 1-d int64 tensor; decreasing unless
// enforce_sorted is false).
PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first = false,
                                    bool enforce_sorted = true);
// The padded batch [T, N, *] ([N, T, *] with batch_first; T = total_length
// when given) and the lengths (int64, CPU).
std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first = false,
                                               double padding_value = 0.0,
                                               std::optional<int64_t> total_length = std::nullopt);
// Tensors [L_i, *] stacked into [max L, N, *] ([N, max L, *]), padded.
Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first = false, double padding_value = 0.0);
// pack_padded_sequence(pad_sequence(sequences), their lengths).
PackedSequence pack_sequence(const std::vector<Tensor>& sequences, bool enforce_sorted = true);

}  // namespace loom::nn::utils::rnn
