/* A library whose constructor starts a thread, so that a program linked
 * with it already runs two threads when liblimpwatch starts. */
#include <pthread.h>
#include <unistd.h>

static void* idle(void* unused) {
  for (;;) pause();
  return unused;
}

__attribute__((constructor)) static void start_early_thread(void) {
  pthread_t thread;
  if (pthread_create(&thread, NULL, idle, NULL) == 0) pthread_detach(thread);
}
