// The registry tests see only their own plugin directories (built under
// REGTEST_DIR) and the build tree, never the user's plugins — under CTest
// and when run by hand alike.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>

int main(int argc, char** argv) {
  // The global registry (load on first use through the core) searches lazy/.
  setenv("LOOM_PLUGIN_PATH", REGTEST_DIR "/lazy", 1);
  setenv("XDG_DATA_HOME", REGTEST_DIR "/no_user_dir", 1);
  unsetenv("LOOM_PLUGIN_DEBUG");
  return Catch::Session().run(argc, argv);
}
