/* A traced program that serves fake requests, for the request-flow tests.
 *
 *   flows requests N    handle_request N times from one loop; odd requests
 *                       also call store_block (a second call tree)
 *   flows threads N     N threads, each one request at its outermost call
 *   flows wide N        one request with N children (longer than a ring)
 *   flows serve MS      requests for MS milliseconds, a millisecond apart
 *
 * Built with -finstrument-functions -fno-inline and linked with
 * liblimpwatch.so; the tests read the segment it keeps (LIMPWATCH_KEEP=1).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned long sink;
#define SINK_ADD(value) __atomic_fetch_add(&sink, (unsigned long)(value), __ATOMIC_RELAXED)

void parse_header(int request) { SINK_ADD(request); }
void lookup_handle(int request) { SINK_ADD(request * 3); }
void store_block(int request) { SINK_ADD(request * 7); }

void handle_request(int request) {
  parse_header(request);
  lookup_handle(request);
  if (request % 2 == 1) store_block(request);
}

void serve_loop(int requests) {
  for (int request = 0; request < requests; ++request) handle_request(request);
}

void* thread_request(void* argument) {
  handle_request((int)(long)argument);
  return NULL;
}

void serve_threads(int threads) {
  for (int index = 0; index < threads; ++index) {
    pthread_t id;
    /* One after the other: each thread is the only one at work. */
    if (pthread_create(&id, NULL, thread_request, (void*)(long)(2 * index)) != 0) exit(3);
    pthread_join(id, NULL);
  }
}

void wide_request(int children) {
  for (int child = 0; child < children; ++child) parse_header(child);
}

static long now_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000L + now.tv_nsec / 1000000L;
}

void serve_for(int ms) {
  struct timespec pause = {0, 1000000L};
  long end = now_ms() + ms;
  for (int request = 0; now_ms() < end; ++request) {
    handle_request(request);
    nanosleep(&pause, NULL);
  }
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: flows requests|threads|wide|serve N\n");
    return 2;
  }
  int count = atoi(argv[2]);
  if (!strcmp(argv[1], "requests")) {
    serve_loop(count);
  } else if (!strcmp(argv[1], "threads")) {
    serve_threads(count);
  } else if (!strcmp(argv[1], "serve")) {
    serve_for(count);
  } else if (!strcmp(argv[1], "wide")) {
    wide_request(count);
  } else {
    return 2;
  }
  printf("done %lu\n", sink);
  return 0;
}
