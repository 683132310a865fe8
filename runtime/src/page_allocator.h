// A standard allocator whose memory comes straight from mmap, for the
// runtime's own large tables (the kernel's symbol table: megabytes, grown
// while it is read).
//
// Why not malloc: when a program frees a large block that glibc had mapped
// on its own, glibc raises its mmap threshold to that block's size (and its
// trim threshold to twice that), for the rest of the process's life. A
// library that grows and frees megabyte vectors inside a server changes how
// the server's own large buffers are allocated. Measured on the test-bed:
// once the sampler had loaded /proc/kallsyms through std::vector, the
// servers' 1 MiB flow buffers were no longer mapped and faulted in per
// request, and a traced server ran a large-file load three times faster, on
// a quarter of the CPU, than the same server untraced. An overhead figure
// taken that way measures the allocator, not limpwatch.
#ifndef LIMPWATCH_RUNTIME_SRC_PAGE_ALLOCATOR_H_
#define LIMPWATCH_RUNTIME_SRC_PAGE_ALLOCATOR_H_

#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <string>

namespace limpwatch::runtime {

template <typename T>
struct PageAllocator {
  using value_type = T;

  PageAllocator() = default;
  template <typename U>
  PageAllocator(const PageAllocator<U>&) noexcept {}  // NOLINT: rebinding, as the standard asks

  T* allocate(size_t count) {
    if (count > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    void* memory = mmap(nullptr, count * sizeof(T), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) throw std::bad_alloc();
    return static_cast<T*>(memory);
  }
  void deallocate(T* memory, size_t count) noexcept { munmap(memory, count * sizeof(T)); }

  template <typename U>
  bool operator==(const PageAllocator<U>&) const noexcept {
    return true;
  }
};

using PageString = std::basic_string<char, std::char_traits<char>, PageAllocator<char>>;

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_PAGE_ALLOCATOR_H_
