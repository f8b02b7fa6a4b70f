// The large-block cache behind the CPU allocator: a freed large block serves
// the next request of about its size, and nothing else.
#include "../host_allocator.hpp"
#include "../large_block_cache.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>

using namespace loom::cpu;

TEST_CASE("large blocks are reused for requests of about their size", "[cpu][allocator]") {
  large_block_release_all();
  const size_t n = size_t{4} << 20;
  void* a = host_allocate(n);
  REQUIRE(a != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(a) % 64 == 0);
  std::memset(a, 1, n);
  host_free(a);
  void* b = host_allocate(n - 4096);  // a little smaller: the same block fits
  CHECK(b == a);
  host_free(b);
  void* c = host_allocate(2 * n);  // much larger: not served from the cache
  CHECK(c != a);
  std::memset(c, 2, 2 * n);  // and really that large
  void* d = host_allocate(n / 2);  // half the size: the cached block would waste memory
  CHECK(d != a);
  host_free(c);
  host_free(d);
  large_block_release_all();
  void* e = host_allocate(n);
  CHECK(reinterpret_cast<uintptr_t>(e) % 64 == 0);
  host_free(e);
}

// RLIMIT_AS caps the address space; the sanitizers reserve terabytes of it.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

TEST_CASE("a refused large allocation empties the cache and tries again", "[cpu][allocator]") {
  // In a child, whose address space is capped at what it uses now plus
  // 768 MiB: a freed 512 MiB block stays cached, and a 640 MiB request
  // (too large for that block) fits only once the cache lets it go.
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    long pages = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
      std::fclose(f);
    }
    const rlim_t used = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE));
    const rlimit cap{used + (rlim_t{768} << 20), used + (rlim_t{768} << 20)};
    if (pages == 0 || setrlimit(RLIMIT_AS, &cap) != 0) _exit(2);
    void* a = host_allocate(size_t{512} << 20);
    if (!a) _exit(3);
    host_free(a);  // cached, still mapped
    void* b = host_allocate(size_t{640} << 20);
    _exit(b ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  INFO("child exit: 1 = refused though the cache held the memory, 2 = no rlimit, 3 = first block refused");
  CHECK(WEXITSTATUS(status) == 0);
}
#endif
