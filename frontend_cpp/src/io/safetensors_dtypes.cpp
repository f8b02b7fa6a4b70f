// safetensors_dtypes.cpp — loom DType <-> safetensors dtype name.
#include "safetensors_dtypes.h"

#include <loom/io.h>

namespace loom::io {

std::string_view safetensors_dtype_name(DType dtype) {
  switch (dtype) {
#define LOOM_ST_NAME(loom_type, st_name, rank) \
  case DType::loom_type:                       \
    return st_name;
    LOOM_SAFETENSORS_DTYPES(LOOM_ST_NAME)
#undef LOOM_ST_NAME
  }
  throw Error(loom::detail::cat("safetensors has no dtype for ", dtype));
}

std::optional<DType> dtype_from_safetensors_name(std::string_view name) {
#define LOOM_ST_PARSE(loom_type, st_name, rank) \
  if (name == st_name) return DType::loom_type;
  LOOM_SAFETENSORS_DTYPES(LOOM_ST_PARSE)
#undef LOOM_ST_PARSE
  return std::nullopt;
}

namespace detail {
int safetensors_rank(DType dtype) {
  switch (dtype) {
#define LOOM_ST_RANK(loom_type, st_name, rank) \
  case DType::loom_type:                       \
    return rank;
    LOOM_SAFETENSORS_DTYPES(LOOM_ST_RANK)
#undef LOOM_ST_RANK
  }
  return -1;
}
}  // namespace detail

}  // namespace loom::io
