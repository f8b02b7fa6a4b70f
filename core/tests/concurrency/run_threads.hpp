// run_threads.hpp — start N threads together and collect what went wrong.
//
// Catch2 v2 assertions are not thread-safe, so a worker never calls CHECK:
// it returns a description of the first mismatch it saw (empty when all was
// right) and the test checks the collected list on its own thread. An
// exception escaping a worker is caught and reported the same way, so a
// failure is a test failure, never std::terminate.
#pragma once

#include <loom/loom.h>

#include <cmath>
#include <cstddef>
#include <exception>
#include <functional>
#include <latch>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace conc {

inline constexpr int kThreads = 8;

// Runs work(t) for t in [0, n) on n threads released at the same moment
// (a latch), so their first calls really overlap. Returns one line per
// failing thread, "thread <t>: <what>".
inline std::vector<std::string> run_threads(int n, const std::function<std::string(int)>& work) {
  std::vector<std::string> result(static_cast<size_t>(n));
  std::latch start(n);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(n));
  for (int t = 0; t < n; ++t)
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      try {
        result[static_cast<size_t>(t)] = work(t);
      } catch (const std::exception& e) {
        result[static_cast<size_t>(t)] = std::string("exception: ") + e.what();
      } catch (...) {
        result[static_cast<size_t>(t)] = "unknown exception";
      }
    });
  for (auto& th : threads) th.join();
  std::vector<std::string> failures;
  for (int t = 0; t < n; ++t)
    if (!result[static_cast<size_t>(t)].empty())
      failures.push_back("thread " + std::to_string(t) + ": " + result[static_cast<size_t>(t)]);
  return failures;
}

// Empty when `got` matches `want` element for element within `tol`
// (relative to max(1, |want|)); otherwise names the first difference.
inline std::string compare(const std::string& what, const std::vector<float>& got,
                           const std::vector<float>& want, float tol = 1e-5f) {
  if (got.size() != want.size())
    return what + ": " + std::to_string(got.size()) + " elements, expected " +
           std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const float scale = std::max(1.0f, std::fabs(want[i]));
    if (!(std::fabs(got[i] - want[i]) <= tol * scale)) {
      std::ostringstream out;
      out << what << ": element " << i << " is " << got[i] << ", expected " << want[i];
      return out.str();
    }
  }
  return {};
}

}  // namespace conc
