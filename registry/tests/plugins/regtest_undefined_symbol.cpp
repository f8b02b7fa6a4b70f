// A library the dynamic loader refuses: it needs a symbol nothing defines, so
// dlopen(RTLD_NOW) fails with "undefined symbol: ...".
extern "C" void regtest_symbol_nobody_defines(void);
extern "C" __attribute__((visibility("default"))) void loom_plugin_entry(void) {
  regtest_symbol_nobody_defines();
}
