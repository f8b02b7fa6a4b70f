// init.cpp — ties the registry to the core when the frontend library loads,
// so `#include <loom/loom.h>` is all a program needs for "cpu" and "sim".
#include <loom/loom.h>

namespace loom {

void init() { registry::install(); }

namespace {
[[maybe_unused]] const bool installed_at_load = (init(), true);
}  // namespace

}  // namespace loom
