// mydev_runtime.h — the stand-in for a vendor's device runtime (the library
// a real backend links: its driver API). A shared library of its own,
// installed beside the plugin's prefix, so the sample shows a plugin that
// finds its runtime after `cmake --install` (loom_add_plugin's install
// RPATH). Plain C, as vendor runtimes are.
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How many devices the machine has. */
int mydev_rt_device_count(void);
/* Device memory: NULL when out of memory. mydev's memory is host memory. */
void* mydev_rt_malloc(size_t nbytes);
void mydev_rt_free(void* p);
/* Copies between host and device memory (either direction). */
void mydev_rt_memcpy(void* dst, const void* src, size_t nbytes);

#ifdef __cplusplus
}
#endif
