// rnn_packing.cpp — packed sequences (loom/nn/utils/rnn.h), the C++ twin of
// frontend_python/loom/nn/utils/rnn.py: the same row arithmetic, one
// index_select to pack and one index_add to unpack.
#include <loom/nn/utils/rnn.h>

#include <loom/error.h>
#include <loom/ops.h>

#include <algorithm>
#include <numeric>
#include <string>

namespace loom::nn::utils::rnn {

namespace {

Tensor int64_tensor(const std::vector<int64_t>& values, const Device& device) {
  return from_vector<int64_t>(values, {static_cast<int64_t>(values.size())}).to(device);
}

Tensor inverse_permutation(const Tensor& perm) {
  const std::vector<int64_t> p = perm.cpu().to_vector<int64_t>();
  std::vector<int64_t> inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) inv[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
  return int64_tensor(inv, perm.device());
}

// For time-major padded data viewed as [T*N, *]: the row of each packed
// element (step by step, the sequences still running) and batch_sizes.
void step_rows(const std::vector<int64_t>& lengths_sorted, int64_t batch, std::vector<int64_t>& batch_sizes,
               std::vector<int64_t>& rows) {
  const int64_t steps = lengths_sorted.empty() ? 0 : lengths_sorted[0];
  for (int64_t t = 0; t < steps; ++t) {
    int64_t running = 0;
    for (int64_t n : lengths_sorted) running += n > t ? 1 : 0;
    batch_sizes.push_back(running);
    for (int64_t i = 0; i < running; ++i) rows.push_back(t * batch + i);
  }
}

}  // namespace

PackedSequence::PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices, Tensor unsorted_indices)
    : data_(std::move(data)),
      batch_sizes_(std::move(batch_sizes)),
      sorted_indices_(std::move(sorted_indices)),
      unsorted_indices_(std::move(unsorted_indices)) {
  LOOM_CHECK(batch_sizes_.defined() && batch_sizes_.dim() == 1 && batch_sizes_.dtype() == kLong,
             "PackedSequence: batch_sizes must be a 1-d int64 tensor");
  if (!unsorted_indices_.defined() && sorted_indices_.defined()) unsorted_indices_ = inverse_permutation(sorted_indices_);
}

PackedSequence PackedSequence::to(const Device& device) const {
  auto moved = [&](const Tensor& t) { return t.defined() ? t.to(device) : t; };
  return PackedSequence(data_.to(device), batch_sizes_, moved(sorted_indices_), moved(unsorted_indices_));
}

PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first, bool enforce_sorted) {
  LOOM_CHECK(lengths.dim() == 1, "pack_padded_sequence: lengths must be a 1-d tensor, got shape ",
             shape_str(lengths.sizes()));
  const std::vector<int64_t> len = lengths.cpu().to(kLong).to_vector<int64_t>();
  std::vector<int64_t> order(len.size());
  std::iota(order.begin(), order.end(), 0);
  Tensor sorted_indices;
  if (enforce_sorted) {
    LOOM_CHECK(std::is_sorted(len.begin(), len.end(), std::greater<>()),
               "pack_padded_sequence: `lengths` array must be sorted in decreasing order when `enforce_sorted` is "
               "true; pass enforce_sorted=false to sort the batch inside");
  } else {
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return len[a] > len[b]; });
    sorted_indices = int64_tensor(order, input.device());
  }
  for (int64_t n : len)
    LOOM_CHECK(n > 0, "pack_padded_sequence: every length must be greater than 0, found ", n);
  LOOM_CHECK(input.dim() >= 2, "pack_padded_sequence: input must have a time and a batch dimension, got shape ",
             shape_str(input.sizes()));
  if (batch_first) input = input.transpose(0, 1);
  const int64_t steps = input.size(0), batch = input.size(1);
  LOOM_CHECK(static_cast<int64_t>(len.size()) == batch, "pack_padded_sequence: ", len.size(),
             " lengths for a batch of ", batch);
  LOOM_CHECK(*std::max_element(len.begin(), len.end()) <= steps, "pack_padded_sequence: a length of ",
             *std::max_element(len.begin(), len.end()), " is longer than the ", steps, " padded steps");
  if (sorted_indices.defined()) input = input.index_select(1, sorted_indices);
  std::vector<int64_t> sorted_lengths, batch_sizes, rows;
  for (int64_t i : order) sorted_lengths.push_back(len[static_cast<size_t>(i)]);
  step_rows(sorted_lengths, batch, batch_sizes, rows);
  DimVector flat_shape{steps * batch};
  for (int64_t d = 2; d < input.dim(); ++d) flat_shape.push_back(input.size(d));
  const Tensor data = input.reshape(flat_shape).index_select(0, int64_tensor(rows, input.device()));
  return PackedSequence(data, int64_tensor(batch_sizes, cpu_device()), sorted_indices);
}

std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first, double padding_value,
                                               std::optional<int64_t> total_length) {
  const Tensor& data = sequence.data();
  const std::vector<int64_t> batch_sizes = sequence.batch_sizes().to_vector<int64_t>();
  LOOM_CHECK(!batch_sizes.empty(), "pad_packed_sequence: the sequence has no steps");
  const int64_t steps = static_cast<int64_t>(batch_sizes.size()), batch = batch_sizes[0];
  LOOM_CHECK(!total_length || *total_length >= steps,
             "pad_packed_sequence: expected total_length to be at least the length of the longest sequence (",
             steps, "), but got total_length=", total_length.value_or(0));
  const int64_t out_steps = total_length.value_or(steps);
  std::vector<int64_t> lengths(static_cast<size_t>(batch)), unused, rows;
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t b : batch_sizes) lengths[static_cast<size_t>(i)] += b > i ? 1 : 0;
  step_rows(lengths, batch, unused, rows);
  const Tensor index = int64_tensor(rows, data.device());
  DimVector flat_shape{out_steps * batch}, out_shape{out_steps, batch};
  for (int64_t d = 1; d < data.dim(); ++d) flat_shape.push_back(data.size(d)), out_shape.push_back(data.size(d));
  Tensor out = index_add(zeros(flat_shape, data.dtype(), data.device()), 0, index, data);
  if (padding_value != 0) {
    const int64_t rows_filled = static_cast<int64_t>(rows.size());
    const Tensor filled = index_add(zeros({out_steps * batch}, kFloat, data.device()), 0, index,
                                    ones({rows_filled}, kFloat, data.device()));
    DimVector mask_shape{out_steps * batch};
    for (int64_t d = 1; d < data.dim(); ++d) mask_shape.push_back(1);
    out = where((filled == 0).reshape(mask_shape), padding_value, out);
  }
  out = out.reshape(out_shape);
  Tensor lengths_t = int64_tensor(lengths, cpu_device());
  if (sequence.unsorted_indices().defined()) {
    out = out.index_select(1, sequence.unsorted_indices());
    lengths_t = lengths_t.index_select(0, sequence.unsorted_indices().cpu());
  }
  return {batch_first ? out.transpose(0, 1) : out, lengths_t};
}

Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first, double padding_value) {
  LOOM_CHECK(!sequences.empty(), "pad_sequence: received an empty list of sequences");
  int64_t longest = 0;
  for (const Tensor& s : sequences) longest = std::max(longest, s.size(0));
  std::vector<Tensor> padded;
  for (const Tensor& s : sequences) {
    const int64_t extra = longest - s.size(0);
    if (extra == 0) {
      padded.push_back(s);
      continue;
    }
    DimVector fill_shape{extra};
    for (int64_t d = 1; d < s.dim(); ++d) fill_shape.push_back(s.size(d));
    padded.push_back(cat({s, full(fill_shape, padding_value, s.dtype(), s.device())}, 0));
  }
  return stack(padded, batch_first ? 0 : 1);
}

PackedSequence pack_sequence(const std::vector<Tensor>& sequences, bool enforce_sorted) {
  std::vector<int64_t> lengths;
  for (const Tensor& s : sequences) lengths.push_back(s.size(0));
  return pack_padded_sequence(pad_sequence(sequences), int64_tensor(lengths, cpu_device()), false, enforce_sorted);
}

}  // namespace loom::nn::utils::rnn
