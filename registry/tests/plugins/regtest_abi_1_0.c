/* A device plugin exactly as a third party would have written it against the
 * ABI 1.0 header, in plain C: compiled with registry/tests/abi_1_0 (the frozen
 * 1.0 header) and nothing else on its include path. It registers device type
 * "regtest_abi10" (host memory) and a float32 "add" kernel.
 *
 * Its LoomDeviceTypeDesc is the 1.0 size; the bytes right after it in memory
 * are poison (non-NULL garbage where a 1.1 table has set_num_threads and
 * get_num_threads). A host that read past struct_size would call them and
 * crash the test. */
#include <loom/plugin_api.h>

#include <stdlib.h>
#include <string.h>

#if LOOM_ABI_MAJOR != 1 || LOOM_ABI_MINOR != 0
#error "regtest_abi_1_0 must be compiled against the frozen ABI 1.0 header"
#endif

#define DEVICE_TYPE "regtest_abi10"

static void error_destroy(LoomError* e) {
  free((void*)e->message);
  free(e);
}

static LoomError* make_error(int32_t code, const char* message) {
  LoomError* e = (LoomError*)calloc(1, sizeof *e);
  char* copy = (char*)malloc(strlen(message) + 1);
  if (!e || !copy) abort(); /* nothing sensible to report with */
  strcpy(copy, message);
  e->struct_size = sizeof *e;
  e->code = code;
  e->message = copy;
  e->destroy = &error_destroy;
  return e;
}

static int32_t device_count(void* data) { (void)data; return 1; }

static LoomError* allocate(void* data, int32_t index, size_t nbytes, void** out) {
  (void)data; (void)index;
  *out = nbytes ? malloc(nbytes) : NULL;
  if (nbytes && !*out) return make_error(LOOM_STATUS_OUT_OF_MEMORY, "regtest_abi10: malloc failed");
  return NULL;
}
static void deallocate(void* data, int32_t index, void* ptr, size_t nbytes) {
  (void)data; (void)index; (void)nbytes;
  free(ptr);
}
static LoomError* copy(void* data, int32_t index, void* dst, const void* src, size_t n, void* stream) {
  (void)data; (void)index; (void)stream;
  if (n) memcpy(dst, src, n);
  return NULL;
}

/* The 1.0 table followed by what a careless host would read as the 1.1 slots. */
static struct {
  LoomDeviceTypeDesc desc;
  void* poison[2];
} g_device = {
    .desc = {.struct_size = sizeof(LoomDeviceTypeDesc),
             .name = DEVICE_TYPE,
             .flags = LOOM_DEVICE_HOST_MEMORY,
             .device_count = &device_count,
             .allocate = &allocate,
             .deallocate = &deallocate,
             .copy_to_host = &copy,
             .copy_from_host = &copy},
    .poison = {(void*)0x10, (void*)0x20}};

/* out = self + alpha * other, float32, contiguous (the host made it so). */
static LoomError* add_f32(const LoomKernelCall* call) {
  const LoomTensorDesc* a = &call->inputs[0];
  const LoomTensorDesc* b = &call->inputs[1];
  const LoomTensorDesc* out = &call->outputs[0];
  double alpha = 1.0;
  if (call->num_values > 0) {
    const LoomValue* v = &call->values[0];
    if (v->kind == LOOM_VALUE_FLOAT) alpha = v->u.f;
    else if (v->kind == LOOM_VALUE_INT || v->kind == LOOM_VALUE_BOOL) alpha = (double)v->u.i;
    else return make_error(LOOM_STATUS_UNSUPPORTED, "regtest_abi10: unexpected alpha kind");
  }
  int64_t n = 1;
  for (int32_t d = 0; d < out->ndim; ++d) n *= out->shape[d];
  const float* pa = (const float*)((const char*)a->data + a->byte_offset);
  const float* pb = (const float*)((const char*)b->data + b->byte_offset);
  float* po = (float*)((char*)out->data + out->byte_offset);
  for (int64_t i = 0; i < n; ++i) po[i] = (float)(pa[i] + alpha * pb[i]);
  return NULL;
}

static LoomError* init(const LoomHostApi* api) {
  int32_t type = -1;
  LoomError* e = api->device_type_register(api->host, &g_device.desc, &type);
  if (e) return e;
  LoomKernelDesc k;
  memset(&k, 0, sizeof k);
  k.struct_size = sizeof k;
  k.op = "add";
  k.device_type = DEVICE_TYPE;
  k.fn = &add_f32;
  k.dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32);
  k.flags = LOOM_KERNEL_CONTIGUOUS_ONLY;
  k.line = __LINE__;
  k.file = __FILE__;
  return api->kernel_register(api->host, &k);
}

LOOM_PLUGIN_EXPORT const LoomPluginInfo* loom_plugin_entry(void) {
  static const LoomPluginInfo info = {sizeof(LoomPluginInfo), LOOM_ABI_MAJOR, LOOM_ABI_MINOR,
                                      "regtest_abi_1_0", "1.0.0-frozen", &init};
  return &info;
}
