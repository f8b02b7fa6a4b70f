// run_on_loop_thread and batch_schedule_loop_thread (loop_thread.hpp).
#include "loop_thread.hpp"

#include <gloo/transport/tcp/device.h>
#include <gloo/transport/tcp/loop.h>

#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <stdexcept>

namespace loom::gloo_plugin {
namespace {

// An eventfd made readable before it is registered: the loop's next
// epoll_wait reports it and calls handleEvents on the loop thread.
class OneShot : public gloo::transport::tcp::Handler {
 public:
  explicit OneShot(const std::function<void()>& fn) : fn_(fn) {
    fd_ = eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd_ < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  }
  ~OneShot() override { ::close(fd_); }

  int fd() const { return fd_; }
  std::future<void> ran() { return ran_.get_future(); }

  void handleEvents(int /*events*/) override {
    uint64_t count = 0;
    // Drain the counter so the descriptor stops being readable (the loop is
    // level-triggered and would otherwise call again until unregistered).
    if (::read(fd_, &count, sizeof count) < 0) return;
    if (fired_.exchange(true)) return;
    try {
      fn_();
      ran_.set_value();
    } catch (...) {
      ran_.set_exception(std::current_exception());
    }
  }

 private:
  const std::function<void()>& fn_;
  int fd_ = -1;
  std::atomic<bool> fired_{false};
  std::promise<void> ran_;
};

}  // namespace

void run_on_loop_thread(gloo::transport::Device& device, const std::function<void()>& fn) {
  auto* tcp = dynamic_cast<gloo::transport::tcp::Device*>(&device);
  if (!tcp) throw std::runtime_error("not a gloo tcp device");
  OneShot handler(fn);
  auto ran = handler.ran();
  tcp->registerDescriptor(handler.fd(), EPOLLIN, &handler);
  const bool in_time = ran.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  // From another thread this waits for a loop tick, so handleEvents is not
  // running (and will not run) once it returns: handler may be destroyed.
  tcp->unregisterDescriptor(handler.fd(), &handler);
  if (!in_time) throw std::runtime_error("the gloo event loop did not run a task within 10 s");
  ran.get();
}

std::string batch_schedule_loop_thread(gloo::transport::Device& device) {
  try {
    run_on_loop_thread(device, [] {
      sched_param param{};
      param.sched_priority = 0;
      // pid 0: the calling thread, i.e. the loop thread. Moving between
      // SCHED_OTHER and SCHED_BATCH needs no privilege; the nice value stays.
      if (sched_setscheduler(0, SCHED_BATCH, &param) != 0)
        throw std::runtime_error(std::string("sched_setscheduler(SCHED_BATCH): ") + std::strerror(errno));
    });
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace loom::gloo_plugin
