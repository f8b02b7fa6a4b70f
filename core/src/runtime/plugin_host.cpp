// plugin_host.cpp — the host side of the plugin ABI: version negotiation,
// the LoomHostApi table, and staged registration (nothing a plugin registers
// takes effect unless its init succeeds).
#include "device_registry.h"
#include "plugin_call.h"

#include <loom/op_registry.h>
#include <loom/error.h>
#include <loom/plugin.hpp>
#include <loom/plugin_host.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>

struct LoomHost {
  std::string plugin;  // name for messages
  std::string origin;  // manifest or library path
  bool open = true;    // registration allowed (during init only)
  struct DeviceType {
    LoomDeviceTypeDesc desc;
    std::string name;
  };
  std::vector<DeviceType> device_types;
  struct Def {
    std::string schema;
    std::string name;
    LoomInferFn infer;
    void* infer_data;
    std::string where;
  };
  std::vector<Def> ops;
  struct Kernel {
    std::string op, device_type;
    loom::KernelEntry entry;
  };
  std::vector<Kernel> kernels;
  std::vector<std::pair<std::string, loom::KernelEntry>> fallbacks;
};

namespace loom {
namespace {

std::mutex g_load_mutex;  // one plugin initialises at a time (slot prediction)
thread_local bool t_in_init = false;

LoomError* fail(int32_t code, const std::string& msg) { return plugin::make_error(code, msg); }

std::string where(const char* file, int32_t line) {
  return file ? detail::cat(file, ":", line) : "(unknown location)";
}


void host_log(LoomHost* h, int32_t level, const char* message);

LoomError* host_device_type_register(LoomHost* h, const LoomDeviceTypeDesc* desc, int32_t* out) {
  if (!h->open) return fail(LOOM_STATUS_INVALID_ARGUMENT, "device_type_register called after init");
  if (!desc || !out) return fail(LOOM_STATUS_INVALID_ARGUMENT, "device_type_register: NULL argument");
  if (desc->struct_size < offsetof(LoomDeviceTypeDesc, copy_on_device))
    return fail(LOOM_STATUS_INVALID_ARGUMENT,
                detail::cat("device_type_register: struct_size ", desc->struct_size,
                            " is too small to hold the required functions"));
  const std::string name = desc->name ? desc->name : "";
  if (find_device_type_slot(name) >= 0)
    return fail(LOOM_STATUS_INVALID_ARGUMENT,
                detail::cat("device type '", name, "' is already provided by ",
                            detail::device_type(find_device_type_slot(name)).plugin));
  for (const auto& d : h->device_types)
    if (d.name == name)
      return fail(LOOM_STATUS_INVALID_ARGUMENT, detail::cat("device type '", name, "' registered twice"));
  LoomHost::DeviceType d{};
  std::memcpy(&d.desc, desc, std::min(desc->struct_size, sizeof d.desc));
  d.name = name;
  d.desc.name = d.name.c_str();
  try {
    detail::check_slot_groups(d.desc);
  } catch (const Error& e) {
    return fail(LOOM_STATUS_INVALID_ARGUMENT, e.what());
  }
  h->device_types.push_back(d);
  // Registration is serialised, so the slot it will get on commit is known.
  *out = static_cast<int32_t>(device_type_names().size() + h->device_types.size() - 1);
  return nullptr;
}

LoomError* host_op_def(LoomHost* h, const LoomOpDef* def) {
  if (!h->open) return fail(LOOM_STATUS_INVALID_ARGUMENT, "op_def called after init");
  if (!def || !def->schema) return fail(LOOM_STATUS_INVALID_ARGUMENT, "op_def: NULL schema");
  return plugin::guard([&] {
    Schema s = parse_schema(def->schema);
    if (Dispatcher::instance().find(s.full_name()))
      throw Error(detail::cat("op_def: op '", s.full_name(), "' is already defined"));
    const bool has_infer = LOOM_STRUCT_HAS(def, LoomOpDef, infer_data);
    h->ops.push_back({def->schema, s.full_name(), has_infer ? def->infer : nullptr,
                      has_infer ? def->infer_data : nullptr,
                      LOOM_STRUCT_HAS(def, LoomOpDef, file) ? where(def->file, def->line) : ""});
  });
}

bool staged_or_known_op(LoomHost* h, const std::string& op) {
  if (Dispatcher::instance().find(op)) return true;
  for (const auto& d : h->ops)
    if (d.name == op) return true;
  return false;
}

bool staged_or_known_type(LoomHost* h, const std::string& type) {
  if (find_device_type_slot(type) >= 0) return true;
  for (const auto& d : h->device_types)
    if (d.name == type) return true;
  return false;
}

LoomError* host_kernel_register(LoomHost* h, const LoomKernelDesc* d) {
  if (!h->open) return fail(LOOM_STATUS_INVALID_ARGUMENT, "kernel_register called after init");
  if (!d || !d->op || !d->device_type || !d->fn)
    return fail(LOOM_STATUS_INVALID_ARGUMENT, "kernel_register: op, device_type and fn are required");
  const std::string at = LOOM_STRUCT_HAS(d, LoomKernelDesc, file) ? where(d->file, d->line) : "";
  if (!staged_or_known_op(h, d->op))
    return fail(LOOM_STATUS_NOT_FOUND, detail::cat("kernel_register: unknown op '", d->op,
                                                   "' for device type '", d->device_type, "' (at ", at, ")"));
  if (!staged_or_known_type(h, d->device_type)) {
    // A kernel for a type no plugin has registered yet (a custom-op plugin
    // adding a "cuda" kernel before the cuda plugin loads): it waits for it.
    host_log(h, LOOM_LOG_INFO,
             detail::cat("kernel for op '", d->op, "' waits for device type '", d->device_type,
                         "' to be registered")
                 .c_str());
  }
  KernelEntry e;
  e.fn = d->fn;
  e.data = d->kernel_data;
  e.dtypes = d->dtypes;
  e.flags = d->flags;
  e.provider = detail::cat("plugin '", h->plugin, "'");
  e.where = at;
  h->kernels.push_back({d->op, d->device_type, std::move(e)});
  return nullptr;
}

LoomError* host_fallback_register(LoomHost* h, const LoomFallbackDesc* d) {
  if (!h->open) return fail(LOOM_STATUS_INVALID_ARGUMENT, "fallback_register called after init");
  if (!d || !d->device_type || !d->fn)
    return fail(LOOM_STATUS_INVALID_ARGUMENT, "fallback_register: device_type and fn are required");
  if (!staged_or_known_type(h, d->device_type))
    return fail(LOOM_STATUS_NOT_FOUND,
                detail::cat("fallback_register: unknown device type '", d->device_type, "'"));
  KernelEntry e;
  e.fn = d->fn;
  e.data = d->kernel_data;
  e.provider = detail::cat("plugin '", h->plugin, "'");
  e.where = LOOM_STRUCT_HAS(d, LoomFallbackDesc, file) ? where(d->file, d->line) : "";
  h->fallbacks.emplace_back(d->device_type, std::move(e));
  return nullptr;
}

const char* host_op_name(const LoomOp* op) { return OpDef::from_abi(op)->name().c_str(); }
const char* host_op_schema(const LoomOp* op) { return OpDef::from_abi(op)->schema().text.c_str(); }

void host_log(LoomHost* h, int32_t level, const char* message) {
  static const bool debug = [] {
    const char* v = std::getenv("LOOM_PLUGIN_DEBUG");
    return v && *v && std::string(v) != "0";
  }();
  if (level < LOOM_LOG_WARNING && !debug) return;
  static const char* names[] = {"debug", "info", "warning", "error"};
  std::cerr << "[loom plugin " << (h ? h->plugin : "?") << "] "
            << names[level < 0 ? 0 : level > 3 ? 3 : level] << ": " << (message ? message : "")
            << "\n";
}

const LoomHostApi kApiTemplate = {
    sizeof(LoomHostApi), LOOM_ABI_MAJOR, LOOM_ABI_MINOR, nullptr,
    &host_device_type_register, &host_op_def, &host_kernel_register, &host_fallback_register,
    &host_op_name, &host_op_schema, &host_log,
};

// Every plugin's host and API table, owned here until exit (see
// register_plugin). A never-destroyed list: plugins may still log through
// their table from static destructors. Guarded by g_load_mutex.
struct LiveHost {
  std::unique_ptr<LoomHost> host;
  std::unique_ptr<LoomHostApi> api;
};
std::vector<LiveHost>& live_hosts() {
  static auto* hosts = new std::vector<LiveHost>;
  return *hosts;
}

// Makes the staged registrations real, in dependency order.
void commit(LoomHost& h, PluginRegistration& r) {
  // The types are found by name from here on, but device_type_slot makes
  // other threads wait until the kernels below are in (mark ready at the end).
  std::vector<int> slots;
  struct MarkReady {
    std::vector<int>& slots;
    ~MarkReady() {
      for (int s : slots) detail::mark_device_type_ready(s);
    }
  } mark_ready{slots};
  for (auto& d : h.device_types) {
    d.desc.name = d.name.c_str();
    slots.push_back(detail::register_device_type(d.desc, detail::cat("plugin '", h.plugin, "' (", h.origin, ")"),
                                                 /*ready=*/false));
    r.device_types.push_back(d.name);
  }
  auto& disp = Dispatcher::instance();
  for (auto& d : h.ops) {
    disp.def(d.schema, detail::cat("plugin '", h.plugin, "' (", d.where, ")"), nullptr, nullptr,
             d.infer, d.infer_data);
    ++r.ops_defined;
  }
  for (auto& k : h.kernels) {
    disp.impl(k.op, k.device_type, k.entry);
    ++r.kernels;
  }
  for (auto& f : h.fallbacks) {
    disp.fallback(f.first, f.second);
    ++r.fallbacks;
  }
}

}  // namespace

const LoomHostApi* host_api() {
  // Not tied to any plugin: its registration slots refuse (open = false).
  static auto* host = [] {
    auto* h = new LoomHost{"(host)", "(host)"};
    h->open = false;
    return h;
  }();
  static LoomHostApi api = [] {
    LoomHostApi a = kApiTemplate;
    a.host = host;
    return a;
  }();
  return &api;
}

PluginRegistration register_plugin(const LoomPluginInfo* info, const std::string& origin) {
  PluginRegistration r;
  auto failed = [&](const std::string& why) {
    r.ok = false;
    r.error = why;
    return r;
  };
  if (!info) return failed(origin + ": the entry function returned NULL");
  if (info->struct_size < offsetof(LoomPluginInfo, init) + sizeof(info->init))
    return failed(detail::cat(origin, ": LoomPluginInfo.struct_size ", info->struct_size,
                              " is too small (need at least ",
                              offsetof(LoomPluginInfo, init) + sizeof(info->init), ")"));
  const std::string name = info->name ? info->name : "(unnamed)";
  if (info->abi_major != LOOM_ABI_MAJOR)
    return failed(detail::cat(origin, ": plugin '", name, "' was built for plugin ABI ",
                              info->abi_major, ".", info->abi_minor, " but this loom speaks ABI ",
                              LOOM_ABI_MAJOR, ".", LOOM_ABI_MINOR,
                              " (the major versions must match; rebuild the plugin)"));
  if (!info->init) return failed(detail::cat(origin, ": plugin '", name, "' has no init function"));
  if (t_in_init)
    return failed(detail::cat(origin, ": plugin '", name,
                              "' was loaded from inside another plugin's init, which is not allowed"));

  std::lock_guard lock(g_load_mutex);
  // Lives until exit: the plugin may keep the table and log through it, and
  // the device type registry keeps pointers to the host's type names.
  auto* host = new LoomHost{name, origin};
  auto* api = new LoomHostApi(kApiTemplate);
  api->host = host;
  live_hosts().push_back({std::unique_ptr<LoomHost>(host), std::unique_ptr<LoomHostApi>(api)});
  // init is plugin code: a C++ exception escaping it (an init written
  // without plugin::guard) fails this plugin like an error status would, and
  // must not leave t_in_init set (every later load on this thread would be
  // refused). Nothing it staged is committed.
  t_in_init = true;
  LoomError* err = nullptr;
  try {
    err = info->init(api);
  } catch (...) {
    t_in_init = false;
    host->open = false;
    try {
      detail::rethrow_plugin_exception("init");
    } catch (const Error& e) {
      return failed(detail::cat(origin, ": plugin '", name, "' init failed: ", e.what()));
    }
  }
  t_in_init = false;
  host->open = false;
  if (err) {
    std::string msg = err->message ? err->message : "(no message)";
    if (err->destroy) err->destroy(err);
    return failed(detail::cat(origin, ": plugin '", name, "' init failed: ", msg));
  }
  try {
    commit(*host, r);
  } catch (const std::exception& e) {
    return failed(detail::cat(origin, ": plugin '", name, "' registration failed: ", e.what()));
  }
  r.ok = true;
  return r;
}

}  // namespace loom
