/* A metadata-heavy small-file load (postmark-like) for measuring what
 * selective tracing saves: create, write 4 KiB, stat, read back and unlink
 * small files in a directory, through tiny helpers called for every byte
 * run or name (the kind `limpwatch select` drops) and a few coarse
 * operations (the kind it keeps).
 *
 *   smallfile_workload DIR FILES ROUNDS
 *
 * prints the elapsed seconds and the CPU seconds of the working thread (what
 * the hooks add to it, without the time a shared VM lends to others). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static unsigned char block[4096];

unsigned hash_step(unsigned hash, unsigned char c) { return (hash ^ c) * 16777619u; }

unsigned hash_name(const char* name) {
  unsigned hash = 2166136261u;
  for (const char* p = name; *p; ++p) hash = hash_step(hash, (unsigned char)*p);
  return hash;
}

int is_separator(char c) { return c == '/'; }

void path_join(char* out, size_t size, const char* dir, const char* name) {
  size_t length = strlen(dir);
  snprintf(out, size, is_separator(dir[length - 1]) ? "%s%s" : "%s/%s", dir, name);
}

unsigned checksum_word(unsigned sum, unsigned word) { return (sum << 1 | sum >> 31) ^ word; }

unsigned checksum(const unsigned char* data, size_t size) {
  unsigned sum = 0;
  for (size_t i = 0; i + 4 <= size; i += 64) sum = checksum_word(sum, *(const unsigned*)(data + i));
  return sum;
}

int create_file(const char* path, unsigned seed) {
  memset(block, (int)(seed & 0xff), sizeof block);
  int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  if (fd < 0) return -1;
  ssize_t written = write(fd, block, sizeof block);
  close(fd);
  return written == (ssize_t)sizeof block ? 0 : -1;
}

int verify_file(const char* path, unsigned seed) {
  struct stat status;
  if (stat(path, &status) != 0 || status.st_size != (off_t)sizeof block) return -1;
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  ssize_t got = read(fd, block, sizeof block);
  close(fd);
  return got == (ssize_t)sizeof block && block[0] == (unsigned char)(seed & 0xff) ? 0 : -1;
}

unsigned run_round(const char* dir, int files) {
  char name[64], path[4096];
  unsigned total = 0;
  for (int i = 0; i < files; ++i) {
    snprintf(name, sizeof name, "file-%06d", i);
    path_join(path, sizeof path, dir, name);
    unsigned seed = hash_name(name);
    if (create_file(path, seed) != 0) return 0;
    total += checksum(block, sizeof block);
  }
  for (int i = 0; i < files; ++i) {
    snprintf(name, sizeof name, "file-%06d", i);
    path_join(path, sizeof path, dir, name);
    if (verify_file(path, hash_name(name)) != 0) return 0;
    unlink(path);
  }
  return total | 1;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s DIR FILES ROUNDS\n", argv[0]);
    return 2;
  }
  int files = atoi(argv[2]), rounds = atoi(argv[3]);
  struct timespec start, end, cpu_start, cpu_end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_start);
  for (int round = 0; round < rounds; ++round) {
    if (run_round(argv[1], files) == 0) {
      perror("smallfile_workload");
      return 1;
    }
  }
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_end);
  clock_gettime(CLOCK_MONOTONIC, &end);
  printf("%.6f %.6f\n", (double)(end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9,
         (double)(cpu_end.tv_sec - cpu_start.tv_sec) + (cpu_end.tv_nsec - cpu_start.tv_nsec) / 1e9);
  return 0;
}
