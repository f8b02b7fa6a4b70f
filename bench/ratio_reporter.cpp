// ratio_reporter.cpp — runs the benchmarks and, after the usual table,
// prints "<peer>_X / loom_X" for every pair measured in this run (peers:
// torch = libtorch, stream = a STREAM loop, dnnl = oneDNN called directly).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>

namespace {

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& r : runs) {
      // With repetitions, keep the median; without, the single run.
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median") continue;
      std::string name = r.benchmark_name();
      if (auto slash = name.find("_median"); slash != std::string::npos) name.erase(slash);
      times_[name] = {r.GetAdjustedRealTime(), benchmark::GetTimeUnitString(r.time_unit)};
    }
  }
  // Pairs every "<peer>_<case>" with "loom_<case>" measured in this run.
  void Finalize() override {
    ConsoleReporter::Finalize();
    static const char* const kPeers[] = {"torch", "stream", "dnnl"};
    bool header = false;
    for (const char* peer : kPeers) {
      const std::string prefix = std::string(peer) + "_";
      for (const auto& [name, t] : times_) {
        if (name.rfind(prefix, 0) != 0) continue;
        const std::string case_name = name.substr(prefix.size());
        auto it = times_.find("loom_" + case_name);
        if (it == times_.end()) continue;
        if (!header) {
          std::printf("\nratios from this run (peer time / loom time; >1 means loom is faster):\n");
          header = true;
        }
        // Each time is in its benchmark's own unit (ns unless it set one).
        std::printf("  %-7s %-24s %8.2fx   (%s %.1f %s, loom %.1f %s)\n", peer, case_name.c_str(),
                    t.value / it->second.value, peer, t.value, t.unit, it->second.value, it->second.unit);
      }
    }
  }

 private:
  struct Time {
    double value;
    const char* unit;
  };
  std::map<std::string, Time> times_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
