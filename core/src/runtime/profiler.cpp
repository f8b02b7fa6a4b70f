// profiler.cpp — recording op calls and summing them (loom/profiler.h).
#include "profiler_hook.h"

#include <loom/op_call.h>
#include <loom/stream.h>

#include <algorithm>
#include <cstdio>
#include <map>

namespace loom::profiler {

namespace detail {
constinit thread_local Profile* active_profile LOOM_FAST_TLS = nullptr;
}  // namespace detail

struct Profile::Marks {
  Event start, end;
};

namespace {

int64_t since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
}

// The device a call runs for: its first defined tensor argument's.
Device call_device(const OpCall& call) {
  for (const Tensor* t : call.args)
    if (t && t->defined()) return t->device();
  return cpu_device();
}

std::string format_ms(double ms) {
  char buf[32];
  if (ms < 0) return "-";
  if (ms >= 1000) std::snprintf(buf, sizeof buf, "%.3fs", ms / 1000);
  else if (ms >= 1) std::snprintf(buf, sizeof buf, "%.3fms", ms);
  else std::snprintf(buf, sizeof buf, "%.3fus", ms * 1000);
  return buf;
}

}  // namespace

size_t Profile::begin_event(std::string name, Device device) {
  const size_t index = events_.size();
  OpEvent& e = events_.emplace_back();
  e.name = std::move(name);
  e.device = device;
  e.depth = depth_++;
  marks_.emplace_back();
  const bool has_events =
      !device.is_host() && std::find(no_events_.begin(), no_events_.end(), device.type) == no_events_.end();
  if (has_events) {
    auto marks = std::make_unique<Marks>();
    try {
      marks->start.record(device);
      marks_.back() = std::move(marks);
    } catch (const Error&) {  // the plugin has no events: host time only for this device type
      no_events_.push_back(device.type);
    }
  }
  e.start_ns = since(start_);  // after the mark, so the host time excludes recording it
  return index;
}

void Profile::end_event(size_t index) {
  OpEvent& e = events_[index];
  e.end_ns = since(start_);
  --depth_;
  if (index >= marks_.size()) return;  // stopped while the call or range ran
  if (auto& marks = marks_[index]) {
    try {
      marks->end.record(e.device);
    } catch (const Error&) {
      marks.reset();
    }
  }
}

// The autograd layer runs a call by dispatching the very same OpCall again
// below itself: that is one call, recorded once (from the outer entry).
ProfilerAccess::Scope::Scope(Profile& p, const OpCall& call) : profile_(p), previous_call_(p.open_call_) {
  if (p.open_call_ == &call) return;
  p.open_call_ = &call;
  index_ = p.begin_event(call.op->name(), call_device(call));
}

ProfilerAccess::Scope::~Scope() {
  if (index_ != kNotRecorded) profile_.end_event(index_);
  profile_.open_call_ = previous_call_;
}

RecordFunction::RecordFunction(const std::string& name) : profile_(detail::active_profile) {
  if (profile_) index_ = profile_->begin_event(name, cpu_device());
}

RecordFunction::~RecordFunction() {
  if (profile_) profile_->end_event(index_);
}

Profile::Profile() : start_(std::chrono::steady_clock::now()), previous_(detail::active_profile) {
  detail::active_profile = this;
}

Profile::~Profile() {
  try {
    stop();
  } catch (...) {  // a device error while reading the times: the host times stand
  }
}

void Profile::stop() {
  if (!recording_) return;
  recording_ = false;
  detail::active_profile = previous_;
  for (size_t i = 0; i < events_.size(); ++i) {
    if (!marks_[i]) continue;
    marks_[i]->end.synchronize();
    events_[i].device_ms = marks_[i]->start.elapsed_ms(marks_[i]->end);
  }
  marks_.clear();
}

std::vector<OpStats> Profile::key_averages(SortBy sort) const {
  // Self time: an event's time less its direct children's (the events one
  // level deeper that begin before it ends; events are in start order).
  std::vector<double> self(events_.size());
  std::vector<size_t> open;  // the enclosing events of the current one
  for (size_t i = 0; i < events_.size(); ++i) {
    const OpEvent& e = events_[i];
    while (!open.empty() && events_[open.back()].depth >= e.depth) open.pop_back();
    self[i] = (e.end_ns - e.start_ns) / 1e6;
    if (!open.empty()) self[open.back()] -= (e.end_ns - e.start_ns) / 1e6;
    open.push_back(i);
  }
  std::map<std::string, OpStats> by_name;
  for (size_t i = 0; i < events_.size(); ++i) {
    const OpEvent& e = events_[i];
    OpStats& s = by_name[e.name];
    s.name = e.name;
    ++s.calls;
    s.host_total_ms += (e.end_ns - e.start_ns) / 1e6;
    s.host_self_ms += self[i];
    if (e.device_ms >= 0) s.device_ms = std::max(s.device_ms, 0.0) + e.device_ms;
  }
  std::vector<OpStats> out;
  for (auto& [name, s] : by_name) out.push_back(std::move(s));
  if (sort == SortBy::Default) {
    const bool any_device = std::any_of(out.begin(), out.end(), [](const OpStats& s) { return s.device_ms >= 0; });
    sort = any_device ? SortBy::Device : SortBy::HostTotal;
  }
  auto key = [sort](const OpStats& s) {
    switch (sort) {
      case SortBy::HostSelf: return s.host_self_ms;
      case SortBy::Device: return s.device_ms;
      case SortBy::Calls: return static_cast<double>(s.calls);
      default: return s.host_total_ms;
    }
  };
  std::stable_sort(out.begin(), out.end(), [&key](const OpStats& a, const OpStats& b) { return key(a) > key(b); });
  return out;
}

std::string Profile::table(size_t row_limit, SortBy sort) const {
  const std::vector<OpStats> stats = key_averages(sort);
  size_t width = 4;
  for (const OpStats& s : stats) width = std::max(width, s.name.size());
  std::string out;
  char line[512];
  const int w = static_cast<int>(width);
  std::snprintf(line, sizeof line, "%-*s  %8s  %12s  %12s  %12s  %12s  %12s\n", w, "Name", "Calls", "Host total",
                "Host self", "Host avg", "Device total", "Device avg");
  out += line;
  out += std::string(width + 86, '-') + "\n";
  // The totals count each moment once: the host and device time of the
  // outermost calls.
  double host = 0, device = -1;
  for (const OpEvent& e : events_) {
    if (e.depth != 0) continue;
    host += (e.end_ns - e.start_ns) / 1e6;
    if (e.device_ms >= 0) device = std::max(device, 0.0) + e.device_ms;
  }
  for (size_t i = 0; i < stats.size() && (row_limit == 0 || i < row_limit); ++i) {
    const OpStats& s = stats[i];
    std::snprintf(line, sizeof line, "%-*s  %8lld  %12s  %12s  %12s  %12s  %12s\n", w, s.name.c_str(),
                  static_cast<long long>(s.calls), format_ms(s.host_total_ms).c_str(),
                  format_ms(s.host_self_ms).c_str(), format_ms(s.host_total_ms / s.calls).c_str(),
                  format_ms(s.device_ms).c_str(), format_ms(s.device_ms < 0 ? -1 : s.device_ms / s.calls).c_str());
    out += line;
  }
  if (row_limit != 0 && stats.size() > row_limit)
    out += "(" + std::to_string(stats.size() - row_limit) + " more ops)\n";
  out += std::string(width + 86, '-') + "\n";
  out += "Host time in ops: " + format_ms(host) + " over " + std::to_string(events_.size()) + " calls";
  if (device >= 0) out += "; device time: " + format_ms(device);
  out += "\n";
  return out;
}

}  // namespace loom::profiler
