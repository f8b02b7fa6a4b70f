// loom/detail/type_name.h — a C++ type's readable name, for messages and
// for the names libtorch derives from types (a module's printed name, a
// custom Function's grad_fn name).
#pragma once

#include <cxxabi.h>

#include <cstdlib>
#include <string>
#include <typeinfo>

namespace loom::detail {

// "loom::nn::LinearImpl" for typeid(LinearImpl).
inline std::string type_name(const std::type_info& t) {
  int status = 0;
  char* name = abi::__cxa_demangle(t.name(), nullptr, nullptr, &status);
  std::string out = status == 0 && name ? name : t.name();
  std::free(name);
  return out;
}

// The name without its namespaces (and enclosing classes): "LinearImpl".
inline std::string unqualified_type_name(const std::type_info& t) {
  const std::string full = type_name(t);
  const size_t colon = full.rfind("::", full.find('<'));
  return colon == std::string::npos ? full : full.substr(colon + 2);
}

}  // namespace loom::detail
