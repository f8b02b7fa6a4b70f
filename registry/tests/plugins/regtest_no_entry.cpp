// A shared library that is not a loom plugin: it lacks the entry symbol.
extern "C" __attribute__((visibility("default"))) int regtest_not_a_plugin(void) { return 42; }
