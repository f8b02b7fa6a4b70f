/*
 * FROZEN: plugin_api/loom/comm_api.h exactly as communication ABI 1.0
 * shipped it (commit 6ca9087), kept only for distributed/tests
 * (comm_abi_compat_test.cpp and the test-only plugin loom_gloo_abi_1_0,
 * the gloo plugin's sources compiled against this header): a communication
 * plugin built against it must keep loading and passing the collective
 * tests on every later 1.x host, and today's header must keep every 1.0
 * field where it is. Never edit it to follow today's header; what differs
 * is what plugin_api/CHANGELOG.md lists since communication ABI 1.0.
 */
/* loom/comm_api.h — the C ABI of communication plugins (collectives).
 *
 * A communication plugin gives loom's process groups their collectives on
 * the tensors of one device type: `gloo` for cpu tensors over TCP, `nccl`
 * for cuda tensors. It is a shared library found by a JSON manifest like a
 * device plugin (registry.h: the manifest lists it under "comm_backends")
 * and loaded at run time, so a vendor ships its collective library as a
 * loom plugin without rebuilding loom. It exports one symbol:
 *
 *   const LoomCommPluginInfo* loom_comm_plugin_entry(void);
 *
 * This table has its own version, with the device ABI's rules
 * (plugin_api.h): LOOM_COMM_ABI_MAJOR changes only when a field changes
 * meaning or moves, and then the host refuses the plugin naming both
 * versions; fields are only ever appended (a minor bump), every struct
 * starts with `struct_size`, and each side reads only the fields the other's
 * struct_size covers. Errors are values (LoomError, plugin_api.h: a status
 * and a message the caller releases with `destroy`), never exceptions.
 *
 * The model (PyTorch's c10d, in C): the host rendezvouses (it owns the
 * key-value store), makes one communicator per process group and rank,
 * and starts collectives on it in the same order on every rank. A started
 * collective is a work handle the host waits on or polls; the plugin runs
 * a communicator's collectives in the order they were started. Tensors
 * arrive as LoomTensorDesc of the plugin's device type, contiguous (the
 * host copies other layouts in and out) and of a dtype in `dtypes`.
 * Sequence numbers, signatures (desynchronisation checks), averaging,
 * timeouts' messages and host-copy fallbacks for devices without a plugin
 * are the host's.
 */
#ifndef LOOM_COMM_API_H
#define LOOM_COMM_API_H

#include <loom/plugin_api.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LOOM_COMM_ABI_MAJOR 1
#define LOOM_COMM_ABI_MINOR 0

/* Opaque, owned by the plugin: from comm_create until comm_destroy. */
typedef struct LoomComm LoomComm;
/* Opaque, owned by the plugin: from collective_start until work_release. */
typedef struct LoomCommWork LoomCommWork;

/* The rendezvous key-value store the host provides (a TCP store on rank 0,
 * a file, ...), already scoped to one communicator: keys may be anything.
 * Every function may block up to the communicator's timeout and returns an
 * error (naming the store's address) rather than hang. Thread-safe. Valid
 * from comm_create until comm_destroy returns. */
typedef struct LoomCommStore {
  size_t struct_size;
  void* host_data; /* passed back to every function; the host's */
  /* Sets `key` (NUL-terminated) to `size` bytes at `data` (copied). */
  LoomError* (*set)(void* host_data, const char* key, const void* data, size_t size);
  /* Waits for `key` and returns its value in a buffer the host allocates:
   * *out_data (NULL when *out_size is 0) is freed with free_value. */
  LoomError* (*get)(void* host_data, const char* key, void** out_data, size_t* out_size);
  void (*free_value)(void* host_data, void* data);
  /* Waits until every key exists, at most timeout_ms (< 0: the store's). */
  LoomError* (*wait)(void* host_data, const char* const* keys, int32_t num_keys, int64_t timeout_ms);
} LoomCommStore;

/* What comm_create needs. Pointers are borrowed for the call, except
 * `store` (see LoomCommStore). */
typedef struct LoomCommConfig {
  size_t struct_size;
  int32_t rank;         /* 0 .. world_size - 1 */
  int32_t world_size;   /* >= 1 */
  int32_t device_index; /* the device of the plugin's device type this rank
                           uses (cuda: the GPU); 0 for cpu */
  int32_t reserved;     /* zero */
  int64_t timeout_ms;   /* every collective and the rendezvous end with an
                           error after this long without progress */
  const LoomCommStore* store;
  /* NUL-terminated address (IP or host name) of this machine that the
   * other ranks can reach — the host picks the one its store connection
   * leaves from; NULL: the plugin's choice. */
  const char* local_address;
} LoomCommConfig;

/* LoomCollective.op: what a collective does. `n` below is the element
 * count of inputs[0] unless stated; `world` the communicator's size.
 * "in place" means outputs[0] may be the same memory as inputs[0]. */
enum {
  LOOM_COMM_ALL_REDUCE = 0,     /* outputs[0] (n) = reduce over ranks of inputs[0]; in place allowed */
  LOOM_COMM_BROADCAST = 1,      /* outputs[0] (n) of every rank = inputs[0] of `root`; in place allowed */
  LOOM_COMM_REDUCE = 2,         /* on `root`, outputs[0] (n) = the reduction; other ranks: no output */
  LOOM_COMM_ALL_GATHER = 3,     /* outputs[0] (world * n) = every rank's inputs[0], in rank order */
  LOOM_COMM_REDUCE_SCATTER = 4, /* inputs[0] (world * m): outputs[0] (m) = the reduction of chunk `rank` */
  LOOM_COMM_ALL_TO_ALL = 5,     /* inputs[0] and outputs[0] (world * m): chunk j goes to rank j, chunk
                                   j of the output came from rank j */
  LOOM_COMM_GATHER = 6,         /* on `root`, outputs[0] (world * n) = every rank's inputs[0]; others: none */
  LOOM_COMM_SCATTER = 7,        /* `root`'s inputs[0] (world * m): outputs[0] (m) of rank j = chunk j */
  LOOM_COMM_BARRIER = 8,        /* no tensors: completes when every rank started it */
  LOOM_COMM_SEND = 9,           /* inputs[0] to rank `root` (the peer), matched by `tag` */
  LOOM_COMM_RECV = 10           /* outputs[0] from rank `root` (the peer), matched by `tag` */
};

/* LoomCollective.reduce_op. AVG is the host's (SUM, then a division). */
enum {
  LOOM_COMM_SUM = 0,
  LOOM_COMM_PRODUCT = 1,
  LOOM_COMM_MIN = 2,
  LOOM_COMM_MAX = 3
};

/* One collective, as collective_start receives it. Borrowed for that call:
 * the tensors' memory must stay valid (and unread/unwritten by the host)
 * until the work completes. */
typedef struct LoomCollective {
  size_t struct_size;
  int32_t op;          /* LOOM_COMM_* above */
  int32_t reduce_op;   /* LOOM_COMM_SUM ..., for the reducing ops */
  int32_t root;        /* BROADCAST, REDUCE, GATHER, SCATTER: the root rank;
                          SEND, RECV: the peer */
  int32_t tag;         /* SEND/RECV: matches a send with a receive */
  int32_t num_inputs;
  int32_t num_outputs;
  const LoomTensorDesc* inputs;
  const LoomTensorDesc* outputs;
  uint64_t sequence;   /* the host's count of collectives on this
                          communicator, from 1, equal on every rank for the
                          same collective (a plugin may tag its messages
                          with it); 0 for SEND and RECV, which only two
                          ranks see */
  void* stream;        /* the device stream to order the work on (cuda);
                          NULL for devices without streams */
  uint32_t flags;      /* LOOM_COMM_FLAG_* below */
  uint32_t reserved;   /* zero */
  uint64_t signature;  /* a hash of the op and its arguments (dtype, sizes,
                          root, reduce op): equal on every rank that issues
                          the same collective. A plugin mixes it into what
                          pairs messages (gloo: the tag), so ranks that issue
                          different collectives at one sequence number never
                          exchange data; they time out, and the host then
                          names the ranks and their ops */
} LoomCollective;

/* LoomCollective.flags. */
enum {
  /* The host will wait for this work at once (a synchronous call): a
   * plugin with nothing else pending may run it on the calling thread
   * before collective_start returns, saving two thread hand-offs. */
  LOOM_COMM_FLAG_BLOCKING = 1u << 0
};

typedef struct LoomCommPluginInfo {
  size_t struct_size;
  uint32_t abi_major;   /* LOOM_COMM_ABI_MAJOR the plugin was built with */
  uint32_t abi_minor;
  const char* name;     /* NUL-terminated, static: "gloo" */
  const char* version;  /* NUL-terminated, static */
  const char* device_type; /* NUL-terminated, static: whose tensors ("cpu") */
  uint64_t dtypes;      /* LOOM_DTYPE_BIT mask of the dtypes it moves and reduces */

  /* NULL when usable here; else why not (e.g. "no GPU"), which the
   * registry lists as the plugin's state. Optional (NULL: always usable). */
  LoomError* (*probe)(void);

  /* Rendezvous: returns when every rank has joined, or an error after the
   * timeout naming what is missing. *out owned by the plugin. */
  LoomError* (*comm_create)(const LoomCommConfig* config, LoomComm** out);
  /* Frees the communicator; no work of it may be pending (host waits or
   * aborts first). */
  void (*comm_destroy)(LoomComm* comm);
  /* Makes every pending and later collective of `comm` fail promptly (a
   * peer is known lost, or the host is shutting down); thread-safe, may be
   * called while another thread waits. Optional (NULL: the host waits for
   * the timeouts instead). */
  LoomError* (*comm_abort)(LoomComm* comm);

  /* Starts a collective; *out (owned by the plugin until work_release) is
   * its handle. Errors here are about the arguments (a dtype not in
   * `dtypes`, an op the plugin lacks: LOOM_STATUS_UNSUPPORTED). */
  LoomError* (*collective_start)(LoomComm* comm, const LoomCollective* c, LoomCommWork** out);
  /* Blocks until the work completes, at most timeout_ms (< 0: the
   * communicator's timeout); its error if it failed (a lost peer, a
   * timeout), named by op, sequence and peer where known. */
  LoomError* (*work_wait)(LoomCommWork* work, int64_t timeout_ms);
  /* Non-blocking: *out_done = 1 when complete (then work_wait returns at
   * once with its result). */
  LoomError* (*work_test)(LoomCommWork* work, int32_t* out_done);
  /* Frees the handle; the work must be complete. */
  void (*work_release)(LoomCommWork* work);
} LoomCommPluginInfo;

typedef const LoomCommPluginInfo* (*LoomCommPluginEntryFn)(void);
#define LOOM_COMM_PLUGIN_ENTRY_SYMBOL "loom_comm_plugin_entry"

#ifdef __cplusplus
}
#endif

#endif /* LOOM_COMM_API_H */
