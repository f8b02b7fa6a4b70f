// optimize.cpp — the passes in their fixed order (loom/jit/passes.h).
#include <loom/jit/passes.h>

namespace loom::jit {

size_t optimize(Graph& g) {
  size_t total = 0;
  for (int round = 0; round < 8; ++round) {
    size_t changed = simplify(g);
    changed += fold_constants(g);
    changed += eliminate_common_subexpressions(g);
    changed += eliminate_dead_code(g);
    total += changed;
    if (!changed) break;
  }
  total += fuse_elementwise(g);
  g.validate();
  return total;
}

}  // namespace loom::jit
