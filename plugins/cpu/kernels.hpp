// The CPU plugin's pieces as register.cpp sees them: the device type and one
// function per kernel, `void(const LoomKernelCall&)`, which throws
// plugin::Failure on a bad call (plugin::kernel<> turns that into an error).
// What each kernel receives is docs/kernel_conventions.md.
#pragma once

#include <loom/plugin_api.h>

namespace loom::cpu {

// device.cpp: the "cpu" device type (host memory, one device, no streams).
const LoomDeviceTypeDesc& device_type_desc();

// copy_cast.cpp
void fill_(const LoomKernelCall& c);
void copy_(const LoomKernelCall& c);

// elementwise.cpp
void add(const LoomKernelCall& c);
void sub(const LoomKernelCall& c);
void mul(const LoomKernelCall& c);
void div(const LoomKernelCall& c);
void neg(const LoomKernelCall& c);
void relu(const LoomKernelCall& c);
void exp(const LoomKernelCall& c);

// reduce.cpp
void sum(const LoomKernelCall& c);

// matmul.cpp (dispatch, own loop) and matmul_onednn.cpp (oneDNN path)
void matmul(const LoomKernelCall& c);

// random.cpp
void uniform_(const LoomKernelCall& c);
void normal_(const LoomKernelCall& c);

}  // namespace loom::cpu
