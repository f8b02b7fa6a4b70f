/*
 * loom/plugin_api.h — the loom device-plugin ABI. Pure C99, depends on nothing.
 *
 * This header IS the contract between the loom core (the "host") and a device
 * plugin (a shared library loaded at run time). A plugin built against
 * ABI major M keeps working with every host of major M, whatever the minor.
 *
 * ---------------------------------------------------------------------------
 * Life of a plugin
 * ---------------------------------------------------------------------------
 *  1. The host finds a JSON manifest naming the library, loads it and looks up
 *     ONE symbol, `loom_plugin_entry` (LOOM_PLUGIN_ENTRY_SYMBOL), of type
 *     LoomPluginEntryFn.
 *  2. It calls the entry, gets a LoomPluginInfo*, refuses the plugin when
 *     `abi_major != LOOM_ABI_MAJOR` of the host, then calls `info->init(host)`.
 *  3. During init the plugin registers, through the LoomHostApi table:
 *     device types (allocator, copies, synchronize, streams/events),
 *     op schemas (`op_def`), kernels (`kernel_register`, the "impl" verb) and
 *     boxed fallbacks (`fallback_register`). Registrations are staged and take
 *     effect only when init returns NULL; an init that returns an error leaves
 *     no trace in the dispatcher.
 *  4. A loaded library stays resident until process exit: storage, kernels and
 *     error objects that came from it may outlive any handle to it.
 *
 * ---------------------------------------------------------------------------
 * Versioning rules (LOOM_ABI_MAJOR / LOOM_ABI_MINOR)
 * ---------------------------------------------------------------------------
 *  - MINOR bump: appending a field at the END of a struct, appending a
 *    function slot to a table, adding an enum value, adding a flag bit.
 *    Nothing is ever removed, reordered, retyped or given a new meaning.
 *  - MAJOR bump: anything else. The host refuses plugins of another major.
 *  - Every struct that may grow begins with `size_t struct_size`, set by its
 *    producer to sizeof(the struct it was compiled with). A reader uses only
 *    the fields that struct_size covers (LOOM_STRUCT_HAS) and treats the rest
 *    as absent/zero. So an old plugin (smaller structs) works on a new host,
 *    and a new plugin must check LOOM_STRUCT_HAS before calling a host slot
 *    that an older host may lack.
 *  - Small frozen value types (LoomDevice, LoomValue) never grow; they carry
 *    no struct_size. A change to them is a major bump.
 *  - Every change is recorded in plugin_api/CHANGELOG.md.
 *
 * ---------------------------------------------------------------------------
 * Conventions
 * ---------------------------------------------------------------------------
 *  - Errors are values: every fallible call returns `LoomError*`, NULL on
 *    success. No C++ exception ever crosses this boundary (loom/plugin.hpp
 *    wraps plugin entry points in a catch-all guard).
 *  - Enum-valued fields are fixed-width integers; the enum constants are
 *    the only valid values.
 *  - Strings are NUL-terminated UTF-8 unless a field says (pointer, length).
 *  - "optional" slots may be NULL. Each pointer field states its owner and
 *    lifetime; "borrowed for the call" means valid only until the call returns.
 */
#ifndef LOOM_PLUGIN_API_H
#define LOOM_PLUGIN_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LOOM_ABI_MAJOR 1
#define LOOM_ABI_MINOR 4

/* The one symbol a plugin exports. */
#define LOOM_PLUGIN_ENTRY_SYMBOL "loom_plugin_entry"

#if defined(_WIN32)
#define LOOM_PLUGIN_EXPORT __declspec(dllexport)
#else
#define LOOM_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* True when the struct at `ptr` (whose struct_size its producer set) is large
 * enough to contain `field` of `type`. */
#define LOOM_STRUCT_HAS(ptr, type, field)                                    \
  ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* ======================================================================== */
/* Status and errors                                                        */
/* ======================================================================== */

/* Values of LoomError.code. */
enum {
  LOOM_STATUS_OK = 0,               /* never carried by an error object */
  LOOM_STATUS_INVALID_ARGUMENT = 1, /* bad shape, dtype, value, or schema */
  LOOM_STATUS_OUT_OF_MEMORY = 2,    /* allocation failed; message has sizes */
  LOOM_STATUS_UNSUPPORTED = 3,      /* a kernel declines this case: the host
                                       then tries the composite or fallback */
  LOOM_STATUS_NOT_FOUND = 4,        /* unknown op, device type, symbol */
  LOOM_STATUS_DEVICE_ERROR = 5,     /* the device or its driver failed */
  LOOM_STATUS_INTERNAL = 6          /* a bug, or an exception caught at the
                                       boundary */
};

/* An error travels as a pointer to this struct. Whoever RECEIVES an error
 * (as a return value) owns it and must call `destroy` exactly once; the
 * code that made it supplies `destroy`, so either side may create errors. */
typedef struct LoomError {
  size_t struct_size;
  int32_t code;        /* LOOM_STATUS_*, never LOOM_STATUS_OK */
  const char* message; /* NUL-terminated, owned by the error, valid until
                          destroy */
  void (*destroy)(struct LoomError* self); /* frees the error and message */
} LoomError;

/* ======================================================================== */
/* Data types                                                               */
/* ======================================================================== */

/* The single source of truth for dtypes; the C++ and Python views are
 * generated from it. X(CppName, python_name, code, dlpack_type_code, bits).
 * `code` is the ABI value and never changes; new dtypes are appended.
 * dlpack_type_code is DLDataTypeCode (kDLInt=0, kDLUInt=1, kDLFloat=2,
 * kDLBfloat=4, kDLBool=6) and with `bits` and lanes=1 gives DLDataType. */
#define LOOM_DTYPE_LIST(X)             \
  X(Bool, bool, 0, 6, 8)               \
  X(UInt8, uint8, 1, 1, 8)             \
  X(Int8, int8, 2, 0, 8)               \
  X(Int16, int16, 3, 0, 16)            \
  X(Int32, int32, 4, 0, 32)            \
  X(Int64, int64, 5, 0, 64)            \
  X(Float16, float16, 6, 2, 16)        \
  X(BFloat16, bfloat16, 7, 4, 16)      \
  X(Float32, float32, 8, 2, 32)        \
  X(Float64, float64, 9, 2, 64)

enum {
  LOOM_DTYPE_BOOL = 0,
  LOOM_DTYPE_UINT8 = 1,
  LOOM_DTYPE_INT8 = 2,
  LOOM_DTYPE_INT16 = 3,
  LOOM_DTYPE_INT32 = 4,
  LOOM_DTYPE_INT64 = 5,
  LOOM_DTYPE_FLOAT16 = 6,   /* IEEE binary16 */
  LOOM_DTYPE_BFLOAT16 = 7,  /* upper half of a binary32 */
  LOOM_DTYPE_FLOAT32 = 8,
  LOOM_DTYPE_FLOAT64 = 9,
  LOOM_DTYPE_COUNT = 10     /* grows with a minor bump */
};

/* Bit for `code` in a dtype mask (LoomKernelDesc.dtypes). */
#define LOOM_DTYPE_BIT(code) (UINT64_C(1) << (code))

/* ======================================================================== */
/* Devices and tensor descriptors                                           */
/* ======================================================================== */

/* A device: `type` is the id the host assigned when the device type was
 * registered (see device_type_register); it is NOT a fixed enum and differs
 * between processes. `index` is the ordinal within that type. Frozen. */
typedef struct LoomDevice {
  int32_t type;
  int32_t index;
} LoomDevice;

/* A tensor argument, which a kernel reads directly (no host call per
 * argument). It holds what DLPack's DLTensor holds but is not laid out like
 * it: it starts with struct_size, `dtype` is a LOOM_DTYPE_* code (not a
 * DLDataType), `device` is loom's (type, index), `strides` is never NULL,
 * and an absent optional tensor has ndim -1. Convert through the frontends'
 * DLPack functions, never by casting.
 * The element at multi-index (i0..in-1) lives at
 *   (char*)data + byte_offset + itemsize * sum(ik * strides[k]).
 * All pointers are borrowed for the duration of the kernel call. */
typedef struct LoomTensorDesc {
  size_t struct_size;
  void* data;             /* base of the storage allocation on `device`;
                             may be NULL when the tensor has no elements */
  LoomDevice device;
  int32_t ndim;           /* -1 marks an absent optional tensor ("Tensor?")*/
  int32_t dtype;          /* LOOM_DTYPE_* */
  const int64_t* shape;   /* ndim entries */
  const int64_t* strides; /* ndim entries, in ELEMENTS (never NULL); 0 means
                             the dimension is broadcast */
  uint64_t byte_offset;   /* from `data` to the first element */
} LoomTensorDesc;

/* ======================================================================== */
/* Non-tensor arguments                                                     */
/* ======================================================================== */

/* Values of LoomValue.kind. */
enum {
  LOOM_VALUE_NONE = 0,        /* an absent optional ("int? dim=None") */
  LOOM_VALUE_BOOL = 1,        /* u.i is 0 or 1 */
  LOOM_VALUE_INT = 2,         /* u.i */
  LOOM_VALUE_FLOAT = 3,       /* u.f */
  LOOM_VALUE_INT_LIST = 4,    /* u.ints */
  LOOM_VALUE_FLOAT_LIST = 5,  /* u.floats */
  LOOM_VALUE_STRING = 6,      /* u.str, (pointer, length), not NUL-terminated
                                 necessarily */
  LOOM_VALUE_DTYPE = 7,       /* u.i is a LOOM_DTYPE_* */
  LOOM_VALUE_DEVICE = 8,      /* u.device */
  LOOM_VALUE_TENSOR_LIST = 9  /* u.i = number of tensors; they are the next
                                 u.i entries of LoomKernelCall.inputs at this
                                 argument's place in schema order */
};

/* One non-tensor argument. Frozen layout; pointers borrowed for the call. */
typedef struct LoomValue {
  int32_t kind; /* LOOM_VALUE_* */
  int32_t reserved; /* zero */
  union {
    int64_t i;
    double f;
    struct { const int64_t* data; int64_t size; } ints;
    struct { const double* data; int64_t size; } floats;
    struct { const char* data; int64_t size; } str;
    LoomDevice device;
  } u;
} LoomValue;

/* ======================================================================== */
/* Kernels                                                                  */
/* ======================================================================== */

/* Opaque handle to an op of the catalog; valid until process exit. */
typedef struct LoomOp LoomOp;

/* Everything a kernel gets. Kernels are "out" kernels: the host has already
 * validated the arguments, computed output shapes and dtypes, allocated
 * `outputs` on the target device, broadcast the inputs to the output shape
 * where the op broadcasts (strides of 0), and cast them to the op's compute
 * dtype. An in-place op's output aliases its mutated input.
 * Every pointer is borrowed for the call. */
typedef struct LoomKernelCall {
  size_t struct_size;
  const LoomOp* op;              /* the op being run (names it for boxed
                                    kernels and messages) */
  const LoomTensorDesc* inputs;  /* the Tensor arguments, in schema order
                                    (Tensor[] arguments flattened in place,
                                    see LOOM_VALUE_TENSOR_LIST) */
  int32_t num_inputs;
  int32_t num_outputs;
  const LoomTensorDesc* outputs; /* the results, in schema order */
  const LoomValue* values;       /* the non-tensor arguments, in schema
                                    order, defaults filled in, dims already
                                    wrapped to be non-negative */
  int32_t num_values;
  int32_t reserved;              /* zero */
  void* stream;                  /* the device stream to run on; NULL for
                                    devices without streams */
  void* kernel_data;             /* the `kernel_data` given at registration */
} LoomKernelCall;

/* A kernel, and also a boxed fallback (which reads call->op to learn what to
 * run). Returns NULL on success. Returning LOOM_STATUS_UNSUPPORTED declines
 * the case: the host then tries the op's composite form or the fallback. */
typedef LoomError* (*LoomKernelFn)(const LoomKernelCall* call);

/* Values for LoomKernelDesc.flags. */
enum {
  /* The kernel needs every input and output contiguous (row-major, no
   * offset restrictions). The host makes inputs contiguous first and gives
   * contiguous outputs, copying back when the real output is not. */
  LOOM_KERNEL_CONTIGUOUS_ONLY = 1u << 0
};

/* A kernel registration: "impl" of op x device type. The host copies the
 * strings; the function and data must live until exit. */
typedef struct LoomKernelDesc {
  size_t struct_size;
  const char* op;          /* op name as in its schema, e.g. "add" */
  const char* device_type; /* e.g. "cpu"; registered by this or an earlier
                              plugin */
  LoomKernelFn fn;
  void* kernel_data;       /* handed back in LoomKernelCall.kernel_data */
  uint64_t dtypes;         /* mask of LOOM_DTYPE_BIT(compute dtype) the kernel
                              takes; 0 means every dtype. Other dtypes go to
                              the fallback. */
  uint32_t flags;          /* LOOM_KERNEL_* */
  int32_t line;            /* where it was registered, for messages */
  const char* file;        /* optional */
} LoomKernelDesc;

/* A boxed fallback for every op on one device type that has no kernel of its
 * own there. Without one, a non-CPU device uses the host's CPU fallback
 * (copy arguments to CPU, run the CPU kernel, copy results back). */
typedef struct LoomFallbackDesc {
  size_t struct_size;
  const char* device_type;
  LoomKernelFn fn;         /* call->op names the op */
  void* kernel_data;
  int32_t line;
  const char* file;        /* optional */
} LoomFallbackDesc;

/* Output description written by an op's infer function. */
typedef struct LoomOutputSpec {
  size_t struct_size;
  int32_t dtype;       /* out: LOOM_DTYPE_* */
  int32_t ndim;        /* out: <= shape_capacity */
  int64_t* shape;      /* out: host-owned buffer of shape_capacity entries */
  int32_t shape_capacity;
} LoomOutputSpec;

/* Computes the outputs of a plugin-defined op from its arguments.
 * `call->outputs` is NULL; `specs` has one entry per schema return. */
typedef LoomError* (*LoomInferFn)(const LoomKernelCall* call,
                                  LoomOutputSpec* specs, int32_t num_specs,
                                  void* infer_data);

/* A new op ("def"). The host parses `schema`, e.g.
 *   "scale(Tensor self, float factor=1.0) -> Tensor"
 * and copies it. */
typedef struct LoomOpDef {
  size_t struct_size;
  const char* schema;
  LoomInferFn infer;   /* optional: NULL means every output has the
                          broadcast shape of the tensor inputs and the
                          promoted dtype of them */
  void* infer_data;
  int32_t line;
  const char* file;    /* optional */
} LoomOpDef;

/* ======================================================================== */
/* Fused elementwise regions (since 1.4)                                    */
/* ======================================================================== */

/* loom.jit's fusion pass joins chains of elementwise ops into regions and
 * offers each region, once, to the device it runs on (LoomDeviceTypeDesc's
 * fused_* slots). A region is a small expression DAG: a list of
 * instructions, each reading earlier ones, over the region's inputs, all
 * computed over ONE iteration space (the outputs' shape; every input is
 * given broadcast to it). A device that compiles it returns a kernel the
 * host runs for every later call; a device that declines (or has no slots)
 * gets the region's ops one by one, like eager code.
 *
 * Op codes: LOOM_FUSED_INPUT and LOOM_FUSED_CAST, then one code per
 * catalog op a region may hold, named by the op (X(CODE, "name")). Codes
 * never change; new ops are appended (a minor bump). An instruction of a
 * catalog op means exactly what that op's kernel computes when called with
 * the instruction's `values` and with inputs of the instruction's argument
 * dtypes, so a plugin can run a region with its own kernels. */
enum {
  LOOM_FUSED_INPUT = 0, /* the region's input args[0], of dtype `dtype` */
  LOOM_FUSED_CAST = 1   /* args[0] converted to `dtype` (copy_'s rules:
                           float to int truncates, to bool is != 0) */
};
#define LOOM_FUSED_OP_LIST(X)                                             \
  X(ADD, "add", 2) X(SUB, "sub", 3) X(MUL, "mul", 4) X(DIV, "div", 5)     \
  X(REMAINDER, "remainder", 6) X(FMOD, "fmod", 7) X(POW, "pow", 8)        \
  X(MAXIMUM, "maximum", 9) X(MINIMUM, "minimum", 10)                      \
  X(ATAN2, "atan2", 11) X(BITWISE_AND, "bitwise_and", 12)                 \
  X(BITWISE_OR, "bitwise_or", 13) X(BITWISE_XOR, "bitwise_xor", 14)       \
  X(LOGICAL_AND, "logical_and", 15) X(LOGICAL_OR, "logical_or", 16)       \
  X(LOGICAL_XOR, "logical_xor", 17) X(EQ, "eq", 18) X(NE, "ne", 19)       \
  X(LT, "lt", 20) X(LE, "le", 21) X(GT, "gt", 22) X(GE, "ge", 23)         \
  X(WHERE, "where", 24) X(LERP, "lerp", 25) X(NEG, "neg", 26)             \
  X(RELU, "relu", 27) X(EXP, "exp", 28) X(ROUND, "round", 29)             \
  X(GELU, "gelu", 30) X(SOFTPLUS, "softplus", 31) X(ELU, "elu", 32)       \
  X(LEAKY_RELU, "leaky_relu", 33) X(NAN_TO_NUM, "nan_to_num", 34)         \
  X(CLAMP, "clamp", 35) X(ABS, "abs", 36) X(SIGN, "sign", 37)             \
  X(SQUARE, "square", 38) X(EXP2, "exp2", 39) X(EXPM1, "expm1", 40)       \
  X(LOG, "log", 41) X(LOG2, "log2", 42) X(LOG1P, "log1p", 43)             \
  X(SQRT, "sqrt", 44) X(RSQRT, "rsqrt", 45)                               \
  X(RECIPROCAL, "reciprocal", 46) X(SIN, "sin", 47) X(COS, "cos", 48)     \
  X(TAN, "tan", 49) X(TANH, "tanh", 50) X(SIGMOID, "sigmoid", 51)         \
  X(ERF, "erf", 52) X(FLOOR, "floor", 53) X(CEIL, "ceil", 54)             \
  X(TRUNC, "trunc", 55) X(SILU, "silu", 56)                               \
  X(LOGICAL_NOT, "logical_not", 57) X(ISNAN, "isnan", 58)                 \
  X(ISINF, "isinf", 59) X(ISFINITE, "isfinite", 60)                       \
  X(HARDTANH, "hardtanh", 61) X(TANH_BACKWARD, "_tanh_backward", 62)     \
  X(SIGMOID_BACKWARD, "_sigmoid_backward", 63)                            \
  X(THRESHOLD_BACKWARD, "_threshold_backward", 64)                        \
  X(SILU_BACKWARD, "_silu_backward", 65) X(GELU_BACKWARD, "_gelu_backward", 66)

#define LOOM_FUSED_OP_ENUM_(CODE, name, value) LOOM_FUSED_##CODE = value,
enum { LOOM_FUSED_OP_LIST(LOOM_FUSED_OP_ENUM_) LOOM_FUSED_OP_END_ };
#undef LOOM_FUSED_OP_ENUM_

/* One instruction. Frozen layout (regions are only ever read by plugins).
 * Its value is referred to by its index in LoomFusedRegion.instrs. */
typedef struct LoomFusedInstr {
  int32_t op;            /* LOOM_FUSED_INPUT, LOOM_FUSED_CAST or a catalog
                            op's LOOM_FUSED_* code */
  int32_t dtype;         /* the result's LOOM_DTYPE_* */
  int32_t compute_dtype; /* the dtype the op's kernel computes in (its
                            LoomKernelDesc.dtypes mask is checked against
                            it); equals `dtype` for INPUT and CAST */
  int32_t num_args;      /* tensor arguments, 0..3 (INPUT: 0) */
  int32_t args[3];       /* INPUT: args[0] is the region input's index;
                            else earlier instructions, in the op's schema
                            order, each already of the dtype the op's kernel
                            gets (the host inserted the CASTs) */
  int32_t num_values;
  const LoomValue* values; /* the op's non-tensor arguments in schema
                              order, as its kernel gets them (defaults
                              filled in); NULL when num_values is 0 */
} LoomFusedInstr;

/* A region offered to fused_compile. Every pointer is borrowed for that
 * call: a plugin that keeps anything copies it. */
typedef struct LoomFusedRegion {
  size_t struct_size;
  uint64_t hash;          /* of everything below but `text`: equal regions
                             hash equal (a plugin's compile-cache key) */
  int32_t num_inputs;     /* inputs of fused_run, in this order */
  int32_t num_instrs;
  const LoomFusedInstr* instrs;
  int32_t num_outputs;    /* outputs of fused_run, in this order */
  int32_t reserved;       /* zero */
  const int32_t* outputs; /* the instruction each output holds */
  const char* text;       /* the region in loom's graph text form, for
                             messages and logs only */
} LoomFusedRegion;

/* ======================================================================== */
/* Device types                                                             */
/* ======================================================================== */

/* Values for LoomDeviceTypeDesc.flags. */
enum {
  /* Device memory is ordinary host memory the host may read and write
   * directly (the CPU device). */
  LOOM_DEVICE_HOST_MEMORY = 1u << 0
};

/* What device_properties reports about one device (since 1.2). The host
 * sets struct_size before the call; the plugin fills what that size covers
 * and leaves the rest. */
typedef struct LoomDeviceProperties {
  size_t struct_size;
  char name[256];                /* NUL-terminated, e.g. "NVIDIA H100 80GB HBM3" */
  uint64_t total_memory;         /* bytes of device memory; 0 when unknown */
  int32_t capability_major;      /* e.g. 9 for sm_90; 0 when not applicable */
  int32_t capability_minor;
  int32_t multiprocessor_count;  /* compute units; 0 when unknown */
  int32_t reserved;              /* zero */
} LoomDeviceProperties;

/* A device allocator's bookkeeping (since 1.2), as PyTorch reports it:
 * bytes handed out to tensors now and at peak, bytes held from the device
 * (handed out plus cached) now and at peak, and counts. */
typedef struct LoomMemoryStats {
  size_t struct_size;
  uint64_t allocated_bytes;
  uint64_t max_allocated_bytes;  /* since the last reset_peak_memory_stats */
  uint64_t reserved_bytes;
  uint64_t max_reserved_bytes;   /* since the last reset_peak_memory_stats */
  uint64_t num_allocs;           /* allocate calls served */
  uint64_t num_cache_hits;       /* of those, served from the cache */
  uint64_t num_device_allocs;    /* blocks taken from the device */
  uint64_t num_ooms;             /* allocate calls that failed */
} LoomMemoryStats;

/* Everything the host needs to manage memory on one device type. Every
 * function gets `device_data` back. Strings are copied by the host; the
 * table itself and `device_data` must live until exit. Copies with a
 * non-NULL stream may be asynchronous on devices with streams. */
typedef struct LoomDeviceTypeDesc {
  size_t struct_size;
  const char* name;  /* lower-case identifier: "cpu", "cuda", "sim" */
  void* device_data; /* owned by the plugin */
  uint32_t flags;    /* LOOM_DEVICE_* */
  int32_t reserved;  /* zero */

  /* Number of devices now; 0 is valid (no hardware, no driver). */
  int32_t (*device_count)(void* device_data);
  /* optional: why device_count is 0, e.g. "no CUDA driver"; plugin-owned
   * static or long-lived string. */
  const char* (*unavailable_reason)(void* device_data);

  /* Allocate `nbytes` (may be 0) on device `index`; *out_ptr receives the
   * block (may be NULL for 0 bytes). Failure must be an error with code
   * LOOM_STATUS_OUT_OF_MEMORY whose message states the sizes. */
  LoomError* (*allocate)(void* device_data, int32_t index, size_t nbytes,
                         void** out_ptr);
  /* Release a block from `allocate`, with the same size. Never fails. */
  void (*deallocate)(void* device_data, int32_t index, void* ptr,
                     size_t nbytes);

  /* Raw byte copies between host memory and the device. */
  LoomError* (*copy_to_host)(void* device_data, int32_t index, void* host_dst,
                             const void* device_src, size_t nbytes,
                             void* stream);
  LoomError* (*copy_from_host)(void* device_data, int32_t index,
                               void* device_dst, const void* host_src,
                               size_t nbytes, void* stream);
  /* optional: between two devices of this type (or within one). Without it
   * the host stages through host memory. */
  LoomError* (*copy_on_device)(void* device_data, int32_t dst_index,
                               void* dst, int32_t src_index, const void* src,
                               size_t nbytes, void* stream);
  /* optional: wait until all work queued on device `index` is done. */
  LoomError* (*synchronize)(void* device_data, int32_t index);

  /* optional, all or none (checked at registration): streams. A stream is an
   * opaque plugin pointer. */
  LoomError* (*stream_create)(void* device_data, int32_t index,
                              void** out_stream);
  void (*stream_destroy)(void* device_data, int32_t index, void* stream);
  LoomError* (*stream_synchronize)(void* device_data, int32_t index,
                                   void* stream);

  /* optional, all or none (checked at registration): events, for ordering
   * and timing. */
  LoomError* (*event_create)(void* device_data, int32_t index,
                             void** out_event);
  void (*event_destroy)(void* device_data, int32_t index, void* event);
  LoomError* (*event_record)(void* device_data, int32_t index, void* event,
                             void* stream);
  LoomError* (*event_synchronize)(void* device_data, int32_t index,
                                  void* event);
  LoomError* (*event_elapsed_ms)(void* device_data, int32_t index,
                                 void* start_event, void* end_event,
                                 float* out_ms);

  /* --- since 1.1 --- */
  /* optional, both or none: how many host threads this device's kernels may
   * use (loom::set_num_threads). A plugin whose kernels run on the host
   * shares one thread pool with every library it calls, so that loom's
   * kernels and, say, oneDNN's never oversubscribe the cores. n >= 1. */
  LoomError* (*set_num_threads)(void* device_data, int32_t n);
  int32_t (*get_num_threads)(void* device_data);

  /* --- since 1.2 --- */
  /* optional: what device `index` is. `out` is host-owned, borrowed for the
   * call, its struct_size set by the host. */
  LoomError* (*device_properties)(void* device_data, int32_t index,
                                  LoomDeviceProperties* out);
  /* optional, all three or none: the allocator's statistics
   * (loom::memory_stats), releasing cached blocks no tensor uses back to
   * the device (loom::empty_cache), and restarting the max_* figures. `out`
   * as above. */
  LoomError* (*memory_stats)(void* device_data, int32_t index,
                             LoomMemoryStats* out);
  LoomError* (*empty_cache)(void* device_data, int32_t index);
  LoomError* (*reset_peak_memory_stats)(void* device_data, int32_t index);
  /* optional (devices with streams): make `stream` (from stream_create, or
   * NULL for the device's default stream) this thread's current stream on
   * device `index`. The host calls it whenever a loom::StreamGuard changes
   * the current stream, so that the plugin's allocator can tie blocks to
   * the stream that uses them; kernels still get the stream in
   * LoomKernelCall.stream and copies in their `stream` argument. */
  LoomError* (*set_current_stream)(void* device_data, int32_t index,
                                   void* stream);
  /* optional: a device-type-wide setting by name, e.g. ("allow_tf32", "1")
   * (loom::set_device_option). `key` and `value` are borrowed for the call.
   * An unknown key must fail with LOOM_STATUS_NOT_FOUND naming it. */
  LoomError* (*set_option)(void* device_data, const char* key,
                           const char* value);

  /* --- since 1.3 --- */
  /* optional, both or none: page-locked ("pinned") host memory that this
   * device type copies to and from asynchronously (Tensor::pin_memory).
   * host_allocate gives `nbytes` (> 0) of host memory in *out_ptr (the host
   * reads and writes it like any host memory) or fails with
   * LOOM_STATUS_OUT_OF_MEMORY stating the size; host_deallocate takes back
   * a block with its size and never fails. Not tied to a device index.
   *
   * The copy contract for such memory: copy_from_host whose `host_src`, and
   * copy_to_host whose `host_dst`, lies inside a live block from
   * host_allocate MAY return while the copy is still queued on `stream`
   * (NULL: the default stream). The plugin must then keep the block from
   * being handed out again (by a later host_allocate) until that copy is
   * done, even when host_deallocate comes first. The host, in turn, waits
   * for the stream (stream_synchronize, or `synchronize` for the default
   * stream) before it reads or reuses the bytes, unless the user asked for
   * a non-blocking copy. Copies of any other host memory keep the 1.0
   * contract. */
  LoomError* (*host_allocate)(void* device_data, size_t nbytes,
                              void** out_ptr);
  void (*host_deallocate)(void* device_data, void* ptr, size_t nbytes);
  /* optional (devices with streams and events): work queued on `stream`
   * (NULL: the default stream) of device `index` after this call starts
   * only once the work before `event`'s latest record is done; the host
   * does not wait (cudaStreamWaitEvent). An event never recorded is
   * already done. */
  LoomError* (*stream_wait_event)(void* device_data, int32_t index,
                                  void* stream, void* event);
  /* optional, both or none: without blocking, *out_done = 1 when all work
   * queued on `stream` (NULL: the default stream), or before `event`'s
   * latest record, is done, else 0. */
  LoomError* (*stream_query)(void* device_data, int32_t index, void* stream,
                             int32_t* out_done);
  LoomError* (*event_query)(void* device_data, int32_t index, void* event,
                            int32_t* out_done);

  /* --- since 1.4 --- */
  /* optional, all three or none: fused elementwise regions (see
   * LoomFusedRegion). fused_compile either returns NULL with *out_kernel
   * set to the plugin's compiled kernel for `region` on device `index`, or
   * declines with LOOM_STATUS_UNSUPPORTED and a message saying why (the
   * host then runs the region op by op and does not offer it again); any
   * other error is reported to the user. The host calls it once per
   * region, device and process, and never for a region it already has.
   * fused_run runs a kernel fused_compile returned, on the same device:
   * `inputs` are the region's inputs broadcast to the outputs' shape
   * (strides 0 where broadcast, any strides otherwise) in region order and
   * of the INPUT instructions' dtypes; `outputs` are freshly allocated,
   * contiguous, of the outputs' instructions' dtypes, and never alias an
   * input. `stream` as in LoomKernelCall. fused_release frees a kernel;
   * the host calls it at most once, and never during a fused_run of it. */
  LoomError* (*fused_compile)(void* device_data, int32_t index,
                              const LoomFusedRegion* region,
                              void** out_kernel);
  LoomError* (*fused_run)(void* device_data, int32_t index, void* kernel,
                          const LoomTensorDesc* inputs, int32_t num_inputs,
                          const LoomTensorDesc* outputs, int32_t num_outputs,
                          void* stream);
  void (*fused_release)(void* device_data, void* kernel);
} LoomDeviceTypeDesc;

/* ======================================================================== */
/* The host table and the plugin entry                                      */
/* ======================================================================== */

/* Opaque host context: pass it back to every host function. */
typedef struct LoomHost LoomHost;

/* Log levels for LoomHostApi.log. */
enum { LOOM_LOG_DEBUG = 0, LOOM_LOG_INFO = 1, LOOM_LOG_WARNING = 2,
       LOOM_LOG_ERROR = 3 };

/* What the host offers a plugin. Owned by the host; the table and `host`
 * stay valid until exit. The registration slots may only be called during
 * init (later they return LOOM_STATUS_INVALID_ARGUMENT). */
typedef struct LoomHostApi {
  size_t struct_size;
  uint32_t abi_major; /* the host's LOOM_ABI_MAJOR */
  uint32_t abi_minor; /* the host's LOOM_ABI_MINOR */
  LoomHost* host;

  /* Register a device type; *out_type receives its id (LoomDevice.type).
   * Fails if another plugin already provides a type of that name. */
  LoomError* (*device_type_register)(LoomHost* host,
                                     const LoomDeviceTypeDesc* desc,
                                     int32_t* out_type);
  /* "def": add an op to the catalog. */
  LoomError* (*op_def)(LoomHost* host, const LoomOpDef* def);
  /* "impl": register a kernel for (op, device type). Fails on an unknown op
   * or device type, naming it. */
  LoomError* (*kernel_register)(LoomHost* host, const LoomKernelDesc* desc);
  /* "fallback": a boxed kernel for every op on one device type. */
  LoomError* (*fallback_register)(LoomHost* host,
                                  const LoomFallbackDesc* desc);
  /* The op's name, e.g. "add"; host-owned, valid until exit. */
  const char* (*op_name)(const LoomOp* op);
  /* The op's full schema string; host-owned, valid until exit. */
  const char* (*op_schema)(const LoomOp* op);
  /* Emit a message through the host's logger. Never fails. */
  void (*log)(LoomHost* host, int32_t level, const char* message);
} LoomHostApi;

/* What the entry symbol returns. Plugin-owned, static, valid until exit. */
typedef struct LoomPluginInfo {
  size_t struct_size;
  uint32_t abi_major;  /* LOOM_ABI_MAJOR the plugin was built with */
  uint32_t abi_minor;  /* LOOM_ABI_MINOR the plugin was built with */
  const char* name;    /* e.g. "cpu"; should match the manifest's name */
  const char* version; /* the plugin's own version, free-form */
  /* Register everything. `api` is valid until exit. Return NULL on
   * success; on error nothing the plugin registered takes effect. */
  LoomError* (*init)(const LoomHostApi* api);
} LoomPluginInfo;

typedef const LoomPluginInfo* (*LoomPluginEntryFn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LOOM_PLUGIN_API_H */
