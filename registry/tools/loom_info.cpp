// loom-info: loads every plugin it can find and reports what came of it.
//
//   loom-info [--debug] [--kernels [device type]]
//
// Prints the plugin search path, then one row per plugin: name, version, ABI,
// state, device count, kernels, library path, and for a failed plugin (or
// one without devices) the reason on the following line; then, per device
// of every loaded plugin, its properties, allocator statistics and the
// optional runtime features its plugin offers; with --kernels, every op each
// device type has a kernel for, with its dtypes and flags. It is a report:
// the exit status is 0 even when plugins failed, and non-zero only for a
// usage error.
#include <loom/device_info.h>
#include <loom/did_you_mean.h>
#include <loom/dtype.h>
#include <loom/op_registry.h>
#include <loom/error.h>
#include <loom/plugin_api.h>
#include <loom/registry.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

void usage(std::FILE* to) {
  std::fprintf(to,
               "usage: loom-info [--debug] [--kernels [device type]]\n"
               "\n"
               "Loads every loom device plugin found on the search path and lists\n"
               "each one with its state.\n"
               "\n"
               "  --debug            trace the search and loading on stderr (same as\n"
               "                     LOOM_PLUGIN_DEBUG=1)\n"
               "  --kernels [type]   also list every op with a kernel on each device\n"
               "                     type (or only on <type>): its dtypes, flags, and\n"
               "                     where it was registered\n"
               "  --help             show this message\n"
               "\n"
               "Environment: LOOM_PLUGIN_PATH (colon-separated directories or\n"
               "manifest files searched first), LOOM_PLUGIN_DEBUG.\n");
}

std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

std::string feature_list(const loom::DeviceRuntimeFeatures& f) {
  std::string out;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!out.empty()) out += ' ';
    out += name;
  };
  add(f.streams, "streams");
  add(f.events, "events");
  add(f.properties, "properties");
  add(f.memory_stats, "memory-stats");
  add(f.current_stream, "current-stream");
  add(f.options, "options");
  add(f.pinned_memory, "pinned-memory");
  add(f.stream_wait, "stream-wait");
  add(f.queries, "queries");
  return out.empty() ? "none" : out;
}

// One block per device: what it is and how its allocator stands, for the
// plugins that offer those (ABI 1.2). A failing query is reported, not fatal.
void print_device(const std::string& type, int index, const loom::DeviceRuntimeFeatures& f) {
  const loom::Device d(type + ":" + std::to_string(index));
  std::printf("    %s\n", d.str().c_str());
  try {
    if (f.properties) {
      const auto p = loom::device_properties(d);
      std::printf("        %s, %s, capability %d.%d, %d compute unit(s)\n", p.name.c_str(),
                  mib(p.total_memory).c_str(), p.major, p.minor, p.multi_processor_count);
    }
    if (f.memory_stats) {
      const auto m = loom::memory_stats(d);
      std::printf("        memory: %s allocated (peak %s), %s reserved (peak %s), %llu allocation(s)\n",
                  mib(m.allocated_bytes).c_str(), mib(m.max_allocated_bytes).c_str(),
                  mib(m.reserved_bytes).c_str(), mib(m.max_reserved_bytes).c_str(),
                  static_cast<unsigned long long>(m.num_allocs));
    }
  } catch (const loom::Error& e) {
    std::printf("        query failed: %s\n", e.what());
  }
}

std::string flag_list(const loom::KernelListing& k) {
  std::string out;
  if (k.flags & LOOM_KERNEL_CONTIGUOUS_ONLY) out = "contiguous-only";
  if (!k.via.empty()) out += (out.empty() ? "" : " ") + std::string("(runs ") + k.via + "'s kernel in place)";
  return out.empty() ? "-" : out;
}

std::string basename_of(const std::string& where) {
  const auto slash = where.rfind('/');
  return slash == std::string::npos ? where : where.substr(slash + 1);
}

// Every op with a kernel on `type`: name, dtypes, flags, file:line.
void print_kernels(const std::string& type) {
  auto kernels = loom::kernels_on(type);
  std::sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) { return a.op < b.op; });
  const auto via = std::count_if(kernels.begin(), kernels.end(), [](const auto& k) { return !k.via.empty(); });
  std::printf("\nops with a kernel on '%s': %zu (%zu registered, %zu in-place forms running their functional "
              "kernel)\n",
              type.c_str(), kernels.size(), kernels.size() - static_cast<std::size_t>(via),
              static_cast<std::size_t>(via));
  std::size_t op_width = 2, dtype_width = 6;
  for (const auto& k : kernels) {
    op_width = std::max(op_width, k.op.size());
    dtype_width = std::max(dtype_width, loom::dtype_mask_str(k.dtypes).size());
  }
  std::printf("  %-*s  %-*s  %s\n", static_cast<int>(op_width), "OP", static_cast<int>(dtype_width), "DTYPES",
              "FLAGS  (REGISTERED BY, AT)");
  for (const auto& k : kernels)
    std::printf("  %-*s  %-*s  %s  (%s, %s)\n", static_cast<int>(op_width), k.op.c_str(),
                static_cast<int>(dtype_width), loom::dtype_mask_str(k.dtypes).c_str(), flag_list(k).c_str(),
                k.provider.c_str(), basename_of(k.where).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  bool list_kernels = false;
  std::string kernels_of;  // "": every loaded device type
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--debug") == 0) {
      loom::registry::set_debug(true);
    } else if (std::strcmp(argv[i], "--kernels") == 0) {
      list_kernels = true;
      if (i + 1 < argc && argv[i + 1][0] != '-') kernels_of = argv[++i];
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "loom-info: unknown argument '%s'\n\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }

  auto& registry = loom::registry::Registry::global();
  std::printf("loom plugin ABI %d.%d\n\nplugin search path:\n", LOOM_ABI_MAJOR, LOOM_ABI_MINOR);
  int n = 0;
  for (const auto& s : registry.search_path())
    std::printf("  %d. %s  [%s%s]\n", ++n, s.path.c_str(), s.origin.c_str(),
                s.exists ? "" : ", missing");

  registry.load_all();
  auto plugins = registry.plugins();

  std::printf("\n%zu plugin(s):\n", plugins.size());
  if (plugins.empty()) return 0;

  struct Row {
    std::string cells[7];
    std::string note;
  };
  const char* header[7] = {"NAME", "VERSION", "ABI", "STATE", "DEVICES", "KERNELS", "LIBRARY"};
  std::vector<Row> rows;
  for (const auto& p : plugins) {
    using loom::registry::PluginState;
    Row r;
    bool ran = p.state == PluginState::Loaded || p.state == PluginState::NoDevices;
    r.cells[0] = p.name;
    r.cells[1] = or_dash(p.version);
    r.cells[2] = or_dash(p.plugin_abi_version.empty() ? p.abi_version : p.plugin_abi_version);
    r.cells[3] = loom::registry::to_string(p.state);
    r.cells[4] = ran ? std::to_string(p.device_count) : "-";
    r.cells[5] = ran ? std::to_string(p.kernels) : "-";
    r.cells[6] = or_dash(p.library_path);
    if (!p.comm_backends.empty()) {  // a communication plugin: no devices or kernels of its own
      r.cells[4] = "-";
      r.cells[5] = "-";
      std::string backends;
      for (const auto& b : p.comm_backends) backends += (backends.empty() ? "" : ", ") + b;
      r.note = "communication backend(s) " + backends +
               (p.comm_device_type.empty() ? "" : " for " + p.comm_device_type + " tensors");
    }
    if (p.state == PluginState::Failed) r.note = "failed: " + p.reason;
    if (p.state == PluginState::NoDevices)
      r.note = (p.comm_backends.empty() ? "no devices: " : "not usable here: ") + p.reason;
    rows.push_back(std::move(r));
  }
  std::size_t width[7];
  for (int c = 0; c < 7; ++c) {
    width[c] = std::strlen(header[c]);
    for (const auto& r : rows) width[c] = std::max(width[c], r.cells[c].size());
  }
  auto print_row = [&](const std::string* cells) {
    std::string line = "  ";
    for (int c = 0; c < 7; ++c) {
      line += cells[c];
      if (c < 6) line += std::string(width[c] - cells[c].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  };
  std::string head[7];
  for (int c = 0; c < 7; ++c) head[c] = header[c];
  print_row(head);
  for (const auto& r : rows) {
    print_row(r.cells);
    if (!r.note.empty()) std::printf("      %s\n", r.note.c_str());
  }

  std::printf("\ndevices:\n");
  for (const auto& p : plugins) {
    if (p.state != loom::registry::PluginState::Loaded) continue;
    for (const auto& type : p.registered_device_types) {
      const auto features = loom::device_runtime_features(type);
      std::printf("  %s: optional runtime features: %s\n", type.c_str(), feature_list(features).c_str());
      for (int i = 0; i < loom::device_count(type); ++i) print_device(type, i, features);
    }
  }
  if (!list_kernels) return 0;
  if (!kernels_of.empty()) {
    if (loom::find_device_type_slot(kernels_of) < 0) {
      std::vector<std::string> known = loom::device_type_names();
      std::string names;
      for (const auto& n : known) names += (names.empty() ? "" : ", ") + n;
      std::fprintf(stderr, "loom-info: --kernels: no device type '%s'%s; registered: %s\n", kernels_of.c_str(),
                   loom::did_you_mean(kernels_of, known).c_str(), names.c_str());
      return 2;
    }
    print_kernels(kernels_of);
    return 0;
  }
  for (const auto& type : loom::device_type_names()) print_kernels(type);
  return 0;
}
