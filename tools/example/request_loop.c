/* An instrumented example server: worker threads serving requests with a
 * known call tree, for watching limpwatch live until the test-bed runs.
 *
 *   worker -> handle_request -> decode_request
 *                            -> read_block      (pread of a real file)
 *                            -> checksum_block  (CPU)
 *                            -> send_reply      (write to a pipe)
 *   drain_replies reads the pipe.
 *
 * Usage: request_loop [SECONDS (default 30)] [THREADS (default 4)] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "limpwatch/limpwatch.h"

enum { kBlockSize = 64 * 1024, kFileBlocks = 64 };

static int data_fd = -1;
static int reply_pipe[2];
static volatile int running = 1;

struct request {
  unsigned id;
  off_t offset;
};

struct request decode_request(unsigned id) {
  struct request request = {id, (off_t)(id % kFileBlocks) * kBlockSize};
  return request;
}

ssize_t read_block(const struct request* request, char* buffer) {
  return pread(data_fd, buffer, kBlockSize, request->offset);
}

unsigned checksum_block(const char* buffer, ssize_t length) {
  unsigned sum = 0;
  for (ssize_t i = 0; i < length; ++i) sum = sum * 31 + (unsigned char)buffer[i];
  return sum;
}

void send_reply(unsigned id, unsigned sum) {
  unsigned reply[2] = {id, sum};
  if (write(reply_pipe[1], reply, sizeof reply) < 0) running = 0;
}

void handle_request(unsigned id, char* buffer) {
  struct request request = decode_request(id);
  ssize_t length = read_block(&request, buffer);
  send_reply(id, checksum_block(buffer, length));
}

void* worker(void* argument) {
  unsigned id = (unsigned)(size_t)argument;
  char* buffer = malloc(kBlockSize);
  while (running) {
    handle_request(id, buffer);
    id += 7;
  }
  free(buffer);
  return NULL;
}

void* drain_replies(void* argument) {
  (void)argument;
  unsigned reply[2];
  while (read(reply_pipe[0], reply, sizeof reply) > 0) {
  }
  return NULL;
}

int make_data_file(void) {
  char path[] = "/tmp/limpwatch-example-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return -1;
  unlink(path);
  char* block = malloc(kBlockSize);
  for (int i = 0; i < kBlockSize; ++i) block[i] = (char)(i * 13);
  for (int i = 0; i < kFileBlocks; ++i) {
    if (write(fd, block, kBlockSize) != kBlockSize) break;
  }
  free(block);
  return fd;
}

int main(int argc, char** argv) {
  int seconds = argc > 1 ? atoi(argv[1]) : 30;
  int threads = argc > 2 ? atoi(argv[2]) : 4;
  if (seconds <= 0 || threads <= 0 || threads > 64) {
    fprintf(stderr, "usage: request_loop [SECONDS] [THREADS (1-64)]\n");
    return 2;
  }
  data_fd = make_data_file();
  if (data_fd < 0 || pipe(reply_pipe) != 0) {
    perror("request_loop");
    return 1;
  }
  char segment[128];
  if (lw_segment_name(segment, sizeof segment) > 0) printf("request_loop: recording into %s\n", segment);
  fflush(stdout);

  pthread_t drainer, workers[64];
  pthread_create(&drainer, NULL, drain_replies, NULL);
  for (int i = 0; i < threads; ++i) pthread_create(&workers[i], NULL, worker, (void*)(size_t)i);
  struct timespec pause = {seconds, 0};
  nanosleep(&pause, NULL);
  running = 0;
  for (int i = 0; i < threads; ++i) pthread_join(workers[i], NULL);
  close(reply_pipe[1]);
  pthread_join(drainer, NULL);
  return 0;
}
