// The exec family: the segment of a process whose image an exec replaces is
// removed first, and published again if the exec fails (runtime/process.h,
// BeforeExec). glibc's execl, execle, execlp, execv and execvp call execve
// inside the library, where no interposition reaches, so each is its own
// hook; execl, execle and execlp build their argument vector on the stack
// (no allocation: a forked child may exec right after the fork).
#include <unistd.h>

#include <cerrno>
#include <cstdarg>

#include "hook_export.h"
#include "process.h"
#include "real_calls.h"

namespace limpwatch::hooks {
namespace {

// Runs the real exec between BeforeExec and, if it returned,
// AfterFailedExec; ENOSYS when the C library has no such function.
template <typename Function, typename... Args>
int AroundExec(Function& slot, const char* name, Args... args) {
  Function real = RealOf(slot);
  if (real == nullptr) real = reinterpret_cast<Function>(ResolveRealCall(name));
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  runtime::BeforeExec();
  int result = real(args...);
  int saved_errno = errno;
  runtime::AfterFailedExec();
  errno = saved_errno;
  return result;
}

// The length of an execl-style argument list: the first argument, those
// that follow it, and the null that ends them.
size_t CountArguments(va_list arguments) {
  size_t count = 1;
  while (va_arg(arguments, char*) != nullptr) ++count;
  return count + 1;
}

// Fills argv[0 .. count) from `first` and the list; for execle, *envp gets
// the environment that follows the null.
void FillArguments(const char* first, va_list arguments, char** argv, size_t count, char* const** envp) {
  argv[0] = const_cast<char*>(first);
  for (size_t index = 1; index < count; ++index) argv[index] = va_arg(arguments, char*);
  if (envp != nullptr) *envp = va_arg(arguments, char* const*);
}

}  // namespace
}  // namespace limpwatch::hooks

using limpwatch::hooks::AroundExec;
using limpwatch::hooks::CountArguments;
using limpwatch::hooks::FillArguments;
using limpwatch::hooks::g_real;
using limpwatch::hooks::RealOf;

LW_INTERPOSED int execve(const char* path, char* const argv[], char* const envp[]) {
  return AroundExec(g_real.execve, "execve", path, argv, envp);
}

LW_INTERPOSED int execv(const char* path, char* const argv[]) { return AroundExec(g_real.execv, "execv", path, argv); }

LW_INTERPOSED int execvp(const char* file, char* const argv[]) {
  return AroundExec(g_real.execvp, "execvp", file, argv);
}

LW_INTERPOSED int execvpe(const char* file, char* const argv[], char* const envp[]) {
  return AroundExec(g_real.execvpe, "execvpe", file, argv, envp);
}

LW_INTERPOSED int fexecve(int fd, char* const argv[], char* const envp[]) {
  return AroundExec(g_real.fexecve, "fexecve", fd, argv, envp);
}

// The variadic ones: the argument vector on the stack, then the vector form
// (hooked above).
LW_INTERPOSED int execl(const char* path, const char* arg, ...) {
  va_list counting;
  va_start(counting, arg);
  size_t count = CountArguments(counting);
  va_end(counting);
  char** argv = static_cast<char**>(__builtin_alloca(count * sizeof(char*)));
  va_list arguments;
  va_start(arguments, arg);
  FillArguments(arg, arguments, argv, count, nullptr);
  va_end(arguments);
  return execv(path, argv);
}

LW_INTERPOSED int execlp(const char* file, const char* arg, ...) {
  va_list counting;
  va_start(counting, arg);
  size_t count = CountArguments(counting);
  va_end(counting);
  char** argv = static_cast<char**>(__builtin_alloca(count * sizeof(char*)));
  va_list arguments;
  va_start(arguments, arg);
  FillArguments(arg, arguments, argv, count, nullptr);
  va_end(arguments);
  return execvp(file, argv);
}

LW_INTERPOSED int execle(const char* path, const char* arg, ...) {
  va_list counting;
  va_start(counting, arg);
  size_t count = CountArguments(counting);
  va_end(counting);
  char** argv = static_cast<char**>(__builtin_alloca(count * sizeof(char*)));
  char* const* envp = nullptr;
  va_list arguments;
  va_start(arguments, arg);
  FillArguments(arg, arguments, argv, count, &envp);
  va_end(arguments);
  return execve(path, argv, envp);
}
