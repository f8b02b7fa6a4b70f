// plugin_call.h (core-internal) — the safety net around every call into
// plugin code.
//
// The ABI's contract is that errors come back as LoomError values and no C++
// exception crosses it (plugin.hpp's guard and kernel<> adapters enforce that
// inside a plugin). A plugin written without them may still let one escape a
// kernel or a device-table slot. With g++/clang on Linux (the Itanium C++
// ABI, one shared libstdc++) such an exception unwinds through the plugin's
// frames into ours, so catching it here turns what would be std::terminate
// into a loom::Error naming the plugin and what it was asked to do. This is a
// safety net, not a contract: a plugin built with -fno-exceptions, with
// another C++ runtime, or whose function is noexcept still terminates.
//
// Zero cost when nothing throws: a try/catch adds no instruction to the
// non-throwing path (table-based unwinding), and `context` — a callable that
// builds the message — runs only on the catch path.
#pragma once

#include "device_registry.h"

#include <loom/error.h>

#include <string>
#include <utility>

namespace loom::detail {

// Must be called from inside a catch handler. Rethrows the current exception
// as loom::Error: kind OutOfMemory for std::bad_alloc, the same kind for a
// loom::Error, Internal for anything else; the message says `context` threw
// a C++ exception across the plugin ABI and gives its what() or its type.
[[noreturn, gnu::cold, gnu::noinline]] void rethrow_plugin_exception(const std::string& context);

// For callers that must not throw (destructors releasing plugin memory or
// handles): prints what rethrow_plugin_exception would have thrown to stderr.
[[gnu::cold, gnu::noinline]] void report_plugin_exception(const std::string& context) noexcept;

// Calls fn(args...) (plugin code); an escaping exception becomes loom::Error
// with context() in its message.
template <class Context, class Fn, class... Args>
inline decltype(auto) call_plugin(Context&& context, Fn fn, Args&&... args) {
  try {
    return fn(std::forward<Args>(args)...);
  } catch (...) {
    rethrow_plugin_exception(context());
  }
}

// As call_plugin, for a slot of a device type's table: the message names the
// slot, the device type and the plugin that registered it.
template <class Fn, class... Args>
inline decltype(auto) call_device_slot(const DeviceTypeEntry& e, const char* slot, Fn fn,
                                       Args&&... args) {
  return call_plugin([&] { return cat(slot, " of device type '", e.name, "' (", e.plugin, ")"); }, fn,
                     std::forward<Args>(args)...);
}

// The noexcept variant of call_device_slot, for void slots called from
// destructors (deallocate, stream_destroy, event_destroy, host_deallocate).
template <class Fn, class... Args>
inline void call_device_slot_nothrow(const DeviceTypeEntry& e, const char* slot, Fn fn,
                                     Args&&... args) noexcept {
  try {
    fn(std::forward<Args>(args)...);
  } catch (...) {
    report_plugin_exception(cat(slot, " of device type '", e.name, "' (", e.plugin, ")"));
  }
}

}  // namespace loom::detail

// LOOM_DEVICE_SLOT(entry, slot, args...): calls entry.desc.slot(device_data,
// args...) through call_device_slot, naming the slot in any error.
#define LOOM_DEVICE_SLOT(entry, slot, ...)                                        \
  ::loom::detail::call_device_slot((entry), #slot, (entry).desc.slot,             \
                                   (entry).desc.device_data __VA_OPT__(, ) __VA_ARGS__)
#define LOOM_DEVICE_SLOT_NOTHROW(entry, slot, ...)                                \
  ::loom::detail::call_device_slot_nothrow((entry), #slot, (entry).desc.slot,     \
                                           (entry).desc.device_data __VA_OPT__(, ) __VA_ARGS__)
