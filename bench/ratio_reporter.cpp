// ratio_reporter.cpp — runs the benchmarks and, after the usual table,
// prints "torch_X / loom_X" for every pair measured in this run.
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
      times_[name] = r.GetAdjustedRealTime();
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    bool header = false;
    for (const auto& [name, t] : times_) {
      if (name.rfind("torch_", 0) != 0) continue;
      auto it = times_.find("loom_" + name.substr(6));
      if (it == times_.end()) continue;
      if (!header) {
        std::printf("\nratio (libtorch time / loom time, same run; >1 means loom is faster):\n");
        header = true;
      }
      std::printf("  %-28s %8.2fx   (libtorch %.1f ns, loom %.1f ns)\n", name.substr(6).c_str(),
                  t / it->second, t, it->second);
    }
  }

 private:
  std::map<std::string, double> times_;
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
