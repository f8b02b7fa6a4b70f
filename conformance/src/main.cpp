// loom-conformance: which ops work on a device, which fall back to the CPU,
// and which are wrong. See docs/conformance.md.
#include "options.h"
#include "runner.h"

#include <cstdlib>
#include <iostream>
#include <unistd.h>

int main(int argc, char** argv) {
  using namespace loom::conformance;
  // -j workers each get an OpenMP pool in the CPU plugin; spinning idle
  // threads then starve the other workers (20x slower on 2 cores). Set
  // before any plugin loads libgomp; inherited by the workers; a user's
  // own setting wins.
  setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
  Options options;
  try {
    options = parse_options(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "loom-conformance: " << e.what() << "\n\n" << usage_text();
    return 2;
  }
  if (options.help) {
    std::cout << usage_text();
    return 0;
  }
  // Workers are this very binary, whatever name it was started under.
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  const std::string self_exe = n > 0 ? std::string(self, static_cast<size_t>(n)) : argv[0];
  try {
    return run_conformance(options, self_exe);
  } catch (const UsageError& e) {
    std::cerr << "loom-conformance: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "loom-conformance: " << e.what() << "\n";
    return 2;
  }
}
