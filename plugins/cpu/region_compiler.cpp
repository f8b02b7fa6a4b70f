// The host-compiler back end of CPU fused regions (region_compiler.hpp).
#include "region_compiler.hpp"

#include <loom/plugin/fnv1a.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

extern char** environ;

#ifndef LOOM_CPU_REGION_CXX
#define LOOM_CPU_REGION_CXX "c++"
#endif

namespace loom::cpu {
namespace {

const std::vector<std::string>& compile_flags() {
  static const std::vector<std::string> flags = {
      "-std=c++20", "-O3", "-march=native",
      // The plugin's own rounding rules: no contraction into FMA; errno and
      // trapping math off only let loops vectorise (as unary_float.cpp).
      "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math",
      "-fPIC", "-shared", "-fvisibility=hidden", "-w"};
  return flags;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

bool executable(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }

// $LOOM_CXX, the build's compiler, or `c++` on PATH; "" when none is found.
std::string find_compiler() {
  if (const char* env = std::getenv("LOOM_CXX"); env && *env) return executable(env) ? env : "";
  if (executable(LOOM_CPU_REGION_CXX)) return LOOM_CPU_REGION_CXX;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && executable(dir + "/c++")) return dir + "/c++";
  return "";
}

// The instruction sets -march=native may use: objects built for one
// machine must not load on another that shares the cache directory.
std::string machine_isa() {
  std::string isa;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) isa += "avx512f,";
  if (__builtin_cpu_supports("avx512bw")) isa += "avx512bw,";
  if (__builtin_cpu_supports("avx512vl")) isa += "avx512vl,";
  if (__builtin_cpu_supports("avx2")) isa += "avx2,";
  if (__builtin_cpu_supports("fma")) isa += "fma,";
  if (__builtin_cpu_supports("avx")) isa += "avx,";
  if (__builtin_cpu_supports("sse4.2")) isa += "sse4.2,";
  return isa;
}

bool make_dirs(const std::string& path) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    const std::string part = path.substr(0, pos);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && ::access(path.c_str(), W_OK) == 0;
}

// A unique name beside `path` for writing before an atomic rename: two
// processes (or threads) compiling one region never see half a file.
std::string temp_beside(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return path + ".tmp" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
}

bool write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = temp_beside(path);
  {
    std::ofstream f(tmp, std::ios::binary);
    f << text;
    if (!f.good()) return false;
  }
  return ::rename(tmp.c_str(), path.c_str()) == 0;
}

struct Toolchain {
  std::string compiler;
  std::string dir;    // the cache directory of this toolchain and machine
  std::string error;  // set when unusable
};

std::string cache_root() {
  if (const char* d = std::getenv("LOOM_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/loom";
  if (const char* d = std::getenv("HOME"); d && *d) return std::string(d) + "/.cache/loom";
  return "";
}

Toolchain make_toolchain() {
  Toolchain t;
  t.compiler = find_compiler();
  if (t.compiler.empty()) {
    t.error = "no C++ compiler: set LOOM_CXX to one, or install c++ (regions run on the tile interpreter)";
    return t;
  }
  std::string key = t.compiler + "\n" + machine_isa() + "\n";
  for (const std::string& f : compile_flags()) key += f + " ";
  for (size_t i = 0; i < kNumRegionHeaders; ++i) key += std::string(kRegionHeaders[i].path) + "\n" + kRegionHeaders[i].text;
  const std::string leaf = "/cpu-regions/" + hex(plugin::fnv1a(key));
  std::string root = cache_root();
  if (root.empty() || !make_dirs(root + leaf)) {
    const char* tmp = std::getenv("TMPDIR");
    root = std::string(tmp && *tmp ? tmp : "/tmp") + "/loom-cache-" + std::to_string(::getuid());
    if (!make_dirs(root + leaf)) {
      t.error = "cannot create a cache directory for compiled regions (tried " + cache_root() + leaf + " and " + root +
                leaf + "; set LOOM_CACHE_DIR)";
      return t;
    }
  }
  t.dir = root + leaf;
  for (size_t i = 0; i < kNumRegionHeaders; ++i) {
    const std::string path = t.dir + "/" + kRegionHeaders[i].path;
    if (::access(path.c_str(), R_OK) == 0) continue;  // the directory's key covers its text
    const size_t slash = path.rfind('/');
    if (!make_dirs(path.substr(0, slash)) || !write_atomically(path, kRegionHeaders[i].text)) {
      t.error = "cannot write " + path;
      return t;
    }
  }
  return t;
}

// One per value of $LOOM_CXX seen (a test may change it); never freed, so
// references stay valid. Called under compile_region's lock.
const Toolchain& toolchain() {
  static std::unordered_map<std::string, std::unique_ptr<Toolchain>> by_env;
  const char* env = std::getenv("LOOM_CXX");
  std::unique_ptr<Toolchain>& t = by_env[env ? env : ""];
  if (!t) t = std::make_unique<Toolchain>(make_toolchain());
  return *t;
}

std::string read_head(const std::string& path, size_t limit) {
  std::ifstream f(path, std::ios::binary);
  std::string s(limit, '\0');
  f.read(s.data(), static_cast<std::streamsize>(limit));
  s.resize(static_cast<size_t>(f.gcount()));
  return s;
}

// Runs the compiler on `src` into `object`; "" or what went wrong.
std::string run_compiler(const Toolchain& t, const std::string& src, const std::string& object) {
  std::vector<std::string> args = {t.compiler};
  for (const std::string& f : compile_flags()) args.push_back(f);
  for (const std::string& a : {std::string("-I"), t.dir, std::string("-o"), object, src}) args.push_back(a);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The compiler must not inherit a sanitizer or profiler preloaded into
  // this process.
  std::vector<char*> envp;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0) envp.push_back(*e);
  envp.push_back(nullptr);
  const std::string log = temp_beside(object) + ".log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, t.compiler.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return "cannot run " + t.compiler + ": " + std::strerror(rc);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string out = read_head(log, 2000);
  ::unlink(log.c_str());
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  const std::string how = WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                            : "was killed by signal " + std::to_string(WTERMSIG(status));
  return t.compiler + " " + how + " compiling " + src + (out.empty() ? "" : ":\n" + out);
}

RegionFn load(const std::string& object, std::string& error) {
  void* handle = ::dlopen(object.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = ::dlerror();
    error = "cannot load " + object + ": " + (e ? e : "unknown error");
    return nullptr;
  }
  void* sym = ::dlsym(handle, kRegionSymbol);
  if (!sym) {
    error = object + " has no " + kRegionSymbol;
    return nullptr;
  }
  return reinterpret_cast<RegionFn>(sym);
}

}  // namespace

CompiledRegion compile_region(const std::string& source) {
  static std::mutex mutex;
  static std::unordered_map<std::string, CompiledRegion> loaded;  // by cache directory and source
  std::lock_guard<std::mutex> lock(mutex);
  CompiledRegion out;
  const Toolchain& t = toolchain();
  if (!t.error.empty()) {
    out.error = t.error;
    return out;  // not remembered per source: the answer is the toolchain's
  }
  const std::string key = t.compiler + "\n" + t.dir + "\n" + source;
  if (auto it = loaded.find(key); it != loaded.end()) return it->second;
  const std::string base = t.dir + "/" + hex(plugin::fnv1a(source)), object = base + ".so", src = base + ".cpp";
  if (::access(object.c_str(), R_OK) == 0) {
    std::string ignored;
    out.fn = load(object, ignored);  // a damaged cached object is rebuilt below
  }
  if (!out.fn) {
    const std::string tmp_src = temp_beside(src) + ".cpp", tmp_object = temp_beside(object) + ".so";
    if (!write_atomically(tmp_src, source)) {
      out.error = "cannot write " + tmp_src;
    } else {
      out.error = run_compiler(t, tmp_src, tmp_object);
      ::unlink(tmp_src.c_str());
      if (out.error.empty() && ::rename(tmp_object.c_str(), object.c_str()) != 0)
        out.error = "cannot rename " + tmp_object + " to " + object + ": " + std::strerror(errno);
      if (out.error.empty()) {
        write_atomically(src, source);  // beside the object, for whoever reads the cache
        out.fn = load(object, out.error);
      } else {
        ::unlink(tmp_object.c_str());
      }
    }
  }
  loaded.emplace(key, out);
  return out;
}

}  // namespace loom::cpu
