// options.cpp — parsing loom-conformance's arguments.
#include "options.h"

#include <cstdlib>

namespace loom::conformance {
namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == ',') {
      if (i > start) out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

double positive_number(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(v > 0))
    throw UsageError(flag + " needs a positive number, got '" + text + "'");
  return v;
}

}  // namespace

const char* usage_text() {
  return R"(usage: loom-conformance --device <type> [options]

Runs every op of the catalog that has sample inputs on a device and compares
each case with the CPU plugin. See docs/conformance.md.

  --device <type>        device type under test (cpu, sim, cuda, ...)
  --plugin <path|name>   load this plugin first (manifest .json, library .so or
                         manifest name); repeatable
  -o, --ops <op[,op]>    only these catalog ops
  --case <glob>          only cases whose ID matches (op/sample/dtype/variant)
  --quick                first 2 samples per op; float32, int64, bool, one half
                         type (default)
  --full                 every sample and dtype
  --grad                 also compare gradients of differentiable ops
  --perf                 also time each contiguous case on the device and on CPU
  --perf-min-time <s>    minimum timed run per side (default 0.02)
  -j, --jobs <n>         worker processes (default 1)
  --timeout <s>          per-case time limit (default 10)
  --report <file.jsonl>  one JSON record per case
  --matrix <file.md>     op x dtype Markdown table
  --expect <file>        expectations: '<case-id-glob> <STATUS> <reason>' lines
  --no-fallback-ok       FALLBACK cases fail the run
  --fused-cases <n>      random fused elementwise regions per dtype offered to
                         the device's fused_* slots (default 24; 0: none; not
                         run with -o or --case)
  --list                 print the selected case IDs and exit
  --in-process           run cases in this process (no isolation; debugging)
  --verbose              keep the workers' stdout and stderr
  -h, --help             this text

Exit status: 0 when every case is PASS, UNSUPPORTED, FALLBACK (unless
--no-fallback-ok) or matches its expectation; 1 otherwise; 2 on bad usage.
)";
}

Options parse_options(int argc, const char* const* argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a != "--worker") o.args.push_back(a);
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(a + " needs a value");
      o.args.push_back(argv[i + 1]);
      return argv[++i];
    };
    if (a == "--device") o.device = value();
    else if (a == "--plugin") o.plugins.push_back(value());
    else if (a == "-o" || a == "--ops") {
      for (auto& op : split_commas(value())) o.filter.ops.push_back(op);
    } else if (a == "--case") o.filter.case_glob = value();
    else if (a == "--quick") o.filter.tier = Tier::Quick;
    else if (a == "--full") o.filter.tier = Tier::Full;
    else if (a == "--grad") o.filter.grad = true;
    else if (a == "--perf") o.perf = true;
    else if (a == "--perf-min-time") o.perf_min_seconds = positive_number(a, value());
    else if (a == "-j" || a == "--jobs") o.jobs = static_cast<int>(positive_number(a, value()));
    else if (a.rfind("-j", 0) == 0 && a.size() > 2) o.jobs = static_cast<int>(positive_number("-j", a.substr(2)));
    else if (a == "--timeout") o.timeout_seconds = positive_number(a, value());
    else if (a == "--report") o.report = value();
    else if (a == "--matrix") o.matrix = value();
    else if (a == "--expect") o.expect = value();
    else if (a == "--no-fallback-ok") o.no_fallback_ok = true;
    else if (a == "--fused-cases") {
      const std::string v = value();
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0' || n < 0 || n > 100000)
        throw UsageError("--fused-cases needs a count from 0 to 100000, got '" + v + "'");
      o.fused_cases = static_cast<int>(n);
    }
    else if (a == "--list") o.list = true;
    else if (a == "--in-process") o.in_process = true;
    else if (a == "--verbose") o.verbose = true;
    else if (a == "--worker") o.worker = true;
    else if (a == "-h" || a == "--help") o.help = true;
    else throw UsageError("unknown argument '" + a + "'");
  }
  if (!o.help && o.device.empty()) throw UsageError("--device <type> is required");
  return o;
}

}  // namespace loom::conformance
