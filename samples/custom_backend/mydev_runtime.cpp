// mydev_runtime.cpp — see mydev_runtime.h: host memory behind a C API.
#include "mydev_runtime.h"

#include <cstdlib>
#include <cstring>

extern "C" {

int mydev_rt_device_count(void) { return 1; }
void* mydev_rt_malloc(size_t nbytes) { return std::malloc(nbytes ? nbytes : 1); }
void mydev_rt_free(void* p) { std::free(p); }
void mydev_rt_memcpy(void* dst, const void* src, size_t nbytes) { std::memcpy(dst, src, nbytes); }

}  // extern "C"
