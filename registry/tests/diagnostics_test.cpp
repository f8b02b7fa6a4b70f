// LOOM_PLUGIN_DEBUG tracing and the loom-info report.
#include "regtest.h"

#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace regtest;

namespace {

// Redirects this process's stderr to a file for one scope.
class StderrCapture {
 public:
  StderrCapture() {
    char name[] = "/tmp/regtest_stderr_XXXXXX";
    int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    file_ = name;
    std::fflush(stderr);
    saved_ = dup(2);
    dup2(fd, 2);
    close(fd);
  }
  std::string finish() {
    if (saved_ >= 0) {
      std::fflush(stderr);
      dup2(saved_, 2);
      close(saved_);
      saved_ = -1;
    }
    std::ifstream in(file_);
    std::stringstream s;
    s << in.rdbuf();
    std::remove(file_.c_str());
    return s.str();
  }
  ~StderrCapture() { finish(); }

 private:
  std::string file_;
  int saved_ = -1;
};

struct RunResult {
  int status = -1;
  std::string output;
};

// Runs a shell command, stdout and stderr together.
RunResult run(const std::string& command) {
  RunResult r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string loom_info(const std::string& args, const std::string& plugin_path) {
  return "env LOOM_PLUGIN_PATH='" + plugin_path + "' XDG_DATA_HOME='" + path("no_user_dir") +
         "' LOOM_PLUGIN_DEBUG= '" LOOM_INFO_EXE "' " + args;
}

}  // namespace

TEST_CASE("LOOM_PLUGIN_DEBUG=1 traces search and loading and negotiation", "[registry][debug]") {
  EnvGuard debug("LOOM_PLUGIN_DEBUG", "1");
  StderrCapture capture;
  Registry r(std::vector<std::string>{path("debug"), path("no_such_dir")});
  r.load_all();
  const std::string out = capture.finish();
  INFO(out);

  CHECK_THAT(out, Contains("[loom plugin] searching directory " + path("debug")));
  CHECK_THAT(out, Contains("[loom plugin] skipping " + path("no_such_dir")));
  CHECK_THAT(out, Contains("[loom plugin] found manifest " + path("debug/dbg.json")));
  CHECK_THAT(out, Contains("resolved library path: " + path("lib/libregtest_dbg.so")));
  CHECK_THAT(out, Contains("version negotiation for 'regtest_dbg': plugin built for ABI"));
  CHECK_THAT(out, Contains("plugin 'regtest_dbg' loaded"));
  // The loader's own text for the broken one, and the outcome.
  CHECK_THAT(out, Contains("undefined symbol: regtest_symbol_nobody_defines"));
  CHECK_THAT(out, Contains("plugin 'regtest_dbg_undefined' failed"));

  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    CHECK_THAT(line, Catch::Matchers::StartsWith("[loom plugin] "));
}

TEST_CASE("tracing is off by default", "[registry][debug]") {
  EnvGuard debug("LOOM_PLUGIN_DEBUG", nullptr);
  StderrCapture capture;
  Registry r(std::vector<std::string>{path("path_a"), path("no_such_dir")});
  r.discover();
  CHECK(capture.finish().empty());
}

TEST_CASE("loom-info lists good and broken plugins and exits 0", "[registry][loom-info]") {
  auto r = run(loom_info("", path("info")));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Contains("plugin search path:"));
  CHECK_THAT(r.output, Contains("1. " + path("info") + "  [LOOM_PLUGIN_PATH]"));
  CHECK_THAT(r.output, Contains("NAME"));
  CHECK_THAT(r.output, Contains("regtest_ok"));
  CHECK_THAT(r.output, Contains("0.0.1-regtest"));
  CHECK_THAT(r.output, Contains(path("lib/libregtest_ok.so")));
  CHECK_THAT(r.output, Contains("regtest_info_broken"));
  CHECK_THAT(r.output, Contains("failed: manifest " + path("info/broken.json") +
                                ": entry symbol 'loom_plugin_entry' not found"));
  CHECK_THAT(r.output, !Contains("[loom plugin]"));
}

TEST_CASE("loom-info --kernels lists each op with its dtypes and flags", "[registry][loom-info]") {
  auto r = run(loom_info("--kernels regtest_ok", path("info")));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Contains("ops with a kernel on 'regtest_ok': 1 (1 registered, 0 in-place forms"));
  CHECK_THAT(r.output, Contains("regtest_ok_identity") && Contains("every dtype") && Contains("contiguous-only") &&
                           Contains("(plugin 'regtest_ok', regtest_plugin.cpp:"));
  auto typo = run(loom_info("--kernels regtest_okk", path("info")));
  CHECK(typo.status == 2);
  CHECK_THAT(typo.output, Contains("no device type 'regtest_okk' (did you mean 'regtest_ok'?)"));
}

TEST_CASE("loom-info --debug traces and a bad argument is a usage error", "[registry][loom-info]") {
  auto traced = run(loom_info("--debug", path("info")));
  CHECK(traced.status == 0);
  CHECK_THAT(traced.output, Contains("[loom plugin] found manifest " + path("info/ok.json")));

  auto bad = run(loom_info("--bogus", path("info")));
  CHECK(bad.status == 2);
  CHECK_THAT(bad.output, Contains("usage: loom-info"));
}
