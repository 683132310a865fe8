/* Signals land on a thread that spends nearly all its time in traced calls,
 * so most of them interrupt limpwatch's hooks. The handler calls a traced
 * function and writes a byte to a pipe, as a server's self-pipe does; the
 * program counts what its handler did. Prints "handled H writes W bytes B"
 * (handler runs, pipe writes tried, bytes written).
 *
 * Usage: signal_calls SIGNALS */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_ulong handled, writes, bytes_written;
static atomic_int running = 1;
static atomic_int spinner_tid;
static volatile unsigned long sink;
static int self_pipe[2];

void in_handler(void) { sink += 1; }

void on_signal(int number) {
  int saved_errno = errno;
  atomic_fetch_add(&handled, 1);
  in_handler();
  unsigned char byte = (unsigned char)number;
  atomic_fetch_add(&writes, 1);
  if (write(self_pipe[1], &byte, 1) == 1) atomic_fetch_add(&bytes_written, 1);
  errno = saved_errno;
}

void spin_work(void) { sink += 3; }

void* spin(void* unused) {
  (void)unused;
  atomic_store(&spinner_tid, (int)syscall(SYS_gettid));
  while (atomic_load(&running)) spin_work();
  return NULL;
}

static void drain(void) {
  char buffer[4096];
  while (read(self_pipe[0], buffer, sizeof buffer) > 0) {
  }
}

int main(int argc, char** argv) {
  int signals = argc > 1 ? atoi(argv[1]) : 20000;
  if (pipe2(self_pipe, O_NONBLOCK | O_CLOEXEC) != 0) return 1;
  struct sigaction action = {0};
  action.sa_handler = on_signal;
  action.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &action, NULL);
  on_signal(SIGUSR1);  /* once outside a hook: its functions are registered */
  pthread_t spinner;
  pthread_create(&spinner, NULL, spin, NULL);
  while (atomic_load(&spinner_tid) == 0) usleep(1000);
  for (int sent = 0; sent < signals; ++sent) {
    syscall(SYS_tgkill, getpid(), atomic_load(&spinner_tid), SIGUSR1);
    if (sent % 32 == 31) {
      usleep(20);
      drain();
    }
  }
  usleep(100000);
  atomic_store(&running, 0);
  pthread_join(spinner, NULL);
  drain();
  printf("handled %lu writes %lu bytes %lu\n", atomic_load(&handled), atomic_load(&writes),
         atomic_load(&bytes_written));
  return 0;
}
