// schema_fuzzer.cpp — libFuzzer target for the op-schema parser
// (core/src/schema.cpp: parse_schema, default_value_of).
//
// Plugins define ops with schema strings the core parses at def time, so a
// malformed schema must come back as loom::Error naming it, never a crash.
#include <loom/error.h>
#include <loom/schema.h>
#include <loom/schema_defaults.h>

#include "fuzz_check.h"

#include <cstddef>
#include <cstdint>
#include <set>
#include <string_view>

namespace {

void check_argument(const loom::Argument& a) {
  LOOM_FUZZ_CHECK(a.list_size >= 0 && a.list_size <= 64);
  LOOM_FUZZ_CHECK(!a.mutated || !a.alias.empty());
  if (!a.default_text) return;
  // What a boxed call passes for an omitted argument: must point inside the
  // schema's own storage.
  const LoomValue v = loom::default_value_of(a);
  if (v.kind == LOOM_VALUE_STRING)
    LOOM_FUZZ_CHECK(v.u.str.size >= 0 && v.u.str.data == a.default_text->data() + 1);
  if (v.kind == LOOM_VALUE_INT_LIST)
    LOOM_FUZZ_CHECK(v.u.ints.size == static_cast<int64_t>(a.default_ints.size()));
  if (v.kind == LOOM_VALUE_FLOAT_LIST)
    LOOM_FUZZ_CHECK(v.u.floats.size == static_cast<int64_t>(a.default_floats.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  loom::Schema schema;
  try {
    schema = loom::parse_schema(text);
  } catch (const loom::Error& e) {
    LOOM_FUZZ_CHECK(std::string_view(e.what()).find("invalid op schema") != std::string_view::npos);
    return 0;
  }
  LOOM_FUZZ_CHECK(!schema.name.empty() && schema.text == text);
  std::set<std::string> names;
  bool any_mutated = false;
  for (const loom::Argument& a : schema.args) {
    LOOM_FUZZ_CHECK(!a.name.empty() && names.insert(a.name).second);
    any_mutated |= a.mutated;
    check_argument(a);
  }
  for (const loom::Argument& r : schema.returns) check_argument(r);
  LOOM_FUZZ_CHECK(schema.is_inplace() == any_mutated);
  LOOM_FUZZ_CHECK(schema.num_tensor_args() <= static_cast<int>(schema.args.size()));
  return 0;
}
