/* A traced program making known I/O calls, for the I/O hook tests.
 *
 * Built with -finstrument-functions and linked with liblimpwatch.so. Each
 * scenario (argv[1]) makes an exact, known set of interposed calls; the
 * tests read the segment it leaves (LIMPWATCH_KEEP=1) and compare. Its own
 * messages go out through the raw write system call, so they are not counted.
 * It exits non-zero, with a message, when a call does not behave as the
 * C library's would (wrong result, errno not preserved).
 */
#define _GNU_SOURCE
#include <aio.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "limpwatch/limpwatch.h"

static void say(const char* format, ...) {
  char line[512];
  va_list arguments;
  va_start(arguments, format);
  int length = vsnprintf(line, sizeof line, format, arguments);
  va_end(arguments);
  if (length > (int)sizeof line - 1) length = (int)sizeof line - 1;
  syscall(SYS_write, 1, line, (size_t)length);
}

static void fail(const char* what) {
  say("FAIL %s: errno %d (%s)\n", what, errno, strerror(errno));
  exit(2);
}

static void expect(int condition, const char* what) {
  if (!condition) fail(what);
}

static void sleep_ms(int ms) {
  struct timespec pause = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&pause, &pause) != 0) {
  }
}

static void describe(const char* label, int fd) {
  char text[256];
  if (lw_fd_describe(fd, text, sizeof text) < 0) snprintf(text, sizeof text, "(not open)");
  say("%s %s\n", label, text);
}

static char* path_in(const char* directory, const char* name) {
  static char paths[4][4096];
  static int next;
  char* path = paths[next++ % 4];
  snprintf(path, 4096, "%s/%s", directory, name);
  return path;
}

/* ---- files: every read and write form, syncs, opens and closes ---- */

static void file_writes(int fd, int count, int size, const char* data) {
  struct iovec halves[2] = {{(void*)data, (size_t)(size / 2)}, {(void*)(data + size / 2), (size_t)(size - size / 2)}};
  for (int i = 0; i < count; ++i) expect(write(fd, data, size) == size, "write");
  for (int i = 0; i < count; ++i) expect(pwrite(fd, data, size, (off_t)i * size) == size, "pwrite");
  for (int i = 0; i < count; ++i) expect(pwrite64(fd, data, size, (off_t)i * size) == size, "pwrite64");
  for (int i = 0; i < count; ++i) expect(writev(fd, halves, 2) == size, "writev");
  for (int i = 0; i < count; ++i) expect(pwritev(fd, halves, 2, (off_t)i * size) == size, "pwritev");
  for (int i = 0; i < count; ++i) expect(pwritev2(fd, halves, 2, (off_t)i * size, 0) == size, "pwritev2");
}

static void file_reads(int fd, int count, int size, char* buffer) {
  struct iovec halves[2] = {{buffer, (size_t)(size / 2)}, {buffer + size / 2, (size_t)(size - size / 2)}};
  lseek(fd, 0, SEEK_SET);
  for (int i = 0; i < count; ++i) expect(read(fd, buffer, size) == size, "read");
  for (int i = 0; i < count; ++i) expect(pread(fd, buffer, size, (off_t)i * size) == size, "pread");
  for (int i = 0; i < count; ++i) expect(pread64(fd, buffer, size, (off_t)i * size) == size, "pread64");
  for (int i = 0; i < count; ++i) expect(readv(fd, halves, 2) == size, "readv");
  for (int i = 0; i < count; ++i) expect(preadv(fd, halves, 2, (off_t)i * size) == size, "preadv");
  for (int i = 0; i < count; ++i) expect(preadv2(fd, halves, 2, (off_t)i * size, 0) == size, "preadv2");
}

/* open 3, close 3, write 6*count (6*count*size bytes), read 6*count, sync 3. */
static int run_files(const char* directory, int count, int size) {
  char* data = malloc((size_t)size);
  char* buffer = malloc((size_t)size);
  memset(data, 'x', (size_t)size);
  char* path = path_in(directory, "files");
  int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
  expect(fd >= 0, "open");
  file_writes(fd, count, size, data);
  expect(fsync(fd) == 0, "fsync");
  expect(fdatasync(fd) == 0, "fdatasync");
  expect(sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) == 0, "sync_file_range");
  file_reads(fd, count, size, buffer);
  describe("file", fd);
  expect(close(fd) == 0, "close");
  int created = creat(path_in(directory, "created"), 0600);
  expect(created >= 0, "creat");
  expect(close(created) == 0, "close created");
  int again = openat(AT_FDCWD, path, O_RDONLY);
  expect(again >= 0, "openat");
  expect(close(again) == 0, "close again");
  unlink(path_in(directory, "created"));
  unlink(path);
  free(buffer);
  free(data);
  return 0;
}

/* ---- TCP over loopback ---- */

static int listen_loopback(int* port) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  expect(listener >= 0, "socket listener");
  int yes = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = 0};
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  expect(bind(listener, (struct sockaddr*)&address, sizeof address) == 0, "bind");
  expect(listen(listener, 16) == 0, "listen");
  socklen_t length = sizeof address;
  getsockname(listener, (struct sockaddr*)&address, &length);
  *port = ntohs(address.sin_port);
  return listener;
}

static int connect_loopback(int port) {
  int client = socket(AF_INET, SOCK_STREAM, 0);
  expect(client >= 0, "socket client");
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  expect(connect(client, (struct sockaddr*)&address, sizeof address) == 0, "connect");
  return client;
}

/* The client sends 5*count messages of `size` with each write form; the
 * server reads them with each read form, then answers count messages the
 * client reads, and the server peeks once. tcp: open 2, connect 1, accept 1,
 * close 3, write 6*count, read 6*count + 1 (the peek, without bytes);
 * accepted reads 5*count, connected reads count. */
static int run_tcp(int count, int size) {
  char* data = malloc((size_t)size);
  char* buffer = malloc((size_t)size);
  memset(data, 'y', (size_t)size);
  int port = 0;
  int listener = listen_loopback(&port);
  int client = connect_loopback(port);
  int server = accept(listener, NULL, NULL);
  expect(server >= 0, "accept");
  struct iovec whole = {data, (size_t)size};
  struct msghdr message = {.msg_iov = &whole, .msg_iovlen = 1};
  for (int i = 0; i < count; ++i) expect(send(client, data, size, 0) == size, "send");
  for (int i = 0; i < count; ++i) expect(write(client, data, size) == size, "write socket");
  for (int i = 0; i < count; ++i) expect(sendto(client, data, size, 0, NULL, 0) == size, "sendto");
  for (int i = 0; i < count; ++i) expect(sendmsg(client, &message, 0) == size, "sendmsg");
  for (int i = 0; i < count; ++i) expect(writev(client, &whole, 1) == size, "writev socket");
  struct iovec into = {buffer, (size_t)size};
  struct msghdr received = {.msg_iov = &into, .msg_iovlen = 1};
  /* A peek, as BMI makes before each message: a read call without bytes. */
  expect(recv(server, buffer, size, MSG_PEEK) > 0, "recv MSG_PEEK");
  for (int i = 0; i < count; ++i) expect(recv(server, buffer, size, MSG_WAITALL) == size, "recv");
  for (int i = 0; i < count; ++i) expect(read(server, buffer, size) == size, "read socket");
  for (int i = 0; i < count; ++i) expect(recvfrom(server, buffer, size, MSG_WAITALL, NULL, NULL) == size, "recvfrom");
  for (int i = 0; i < count; ++i) expect(recvmsg(server, &received, MSG_WAITALL) == size, "recvmsg");
  for (int i = 0; i < count; ++i) expect(readv(server, &into, 1) == size, "readv socket");
  for (int i = 0; i < count; ++i) expect(send(server, data, size, 0) == size, "send answer");
  for (int i = 0; i < count; ++i) expect(recv(client, buffer, size, MSG_WAITALL) == size, "recv answer");
  describe("server", server);
  describe("client", client);
  say("port %d\n", port);
  close(server);
  close(client);
  close(listener);
  free(buffer);
  free(data);
  return 0;
}

/* ---- pipes: pipe: open 2, write 2*count, read 2*count, close 4 ---- */

static int run_pipes(int count, int size) {
  char* data = malloc((size_t)size);
  char* buffer = malloc((size_t)size);
  memset(data, 'z', (size_t)size);
  int plain[2], flagged[2];
  expect(pipe(plain) == 0, "pipe");
  expect(pipe2(flagged, O_CLOEXEC) == 0, "pipe2");
  struct iovec out = {data, (size_t)size}, in = {buffer, (size_t)size};
  for (int i = 0; i < count; ++i) {
    expect(write(plain[1], data, size) == size, "write pipe");
    expect(read(plain[0], buffer, size) == size, "read pipe");
    expect(writev(flagged[1], &out, 1) == size, "writev pipe");
    expect(readv(flagged[0], &in, 1) == size, "readv pipe");
  }
  describe("pipe", plain[0]);
  for (int i = 0; i < 2; ++i) {
    close(plain[i]);
    close(flagged[i]);
  }
  free(buffer);
  free(data);
  return 0;
}

/* ---- an fd number reused after close is counted under its new kind ----
 * The kernel hands out the lowest free number, but limpwatch's own service
 * thread may take it in between (it opens /proc files): then the attempt is
 * repeated, and the number of attempts printed for the test's arithmetic. */

enum { kReuseAttempts = 20 };

static int run_reuse(const char* directory) {
  char buffer[16] = {0};
  int port = 0;
  int listener = listen_loopback(&port);
  char* path = path_in(directory, "reuse");
  int setup = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
  expect(setup >= 0 && pwrite(setup, "0123456789", 10, 0) == 10, "create");
  int fd = -1, reused = -1, attempts = 0;
  while (attempts < kReuseAttempts) {
    ++attempts;
    fd = open(path, O_RDONLY);
    expect(fd >= 0 && pread(fd, buffer, 10, 0) == 10, "open and pread");
    if (attempts == 1) describe("before", fd);
    expect(close(fd) == 0, "close");
    reused = socket(AF_INET, SOCK_STREAM, 0);
    if (reused == fd) break;
    close(reused);
  }
  expect(reused == fd, "socket reuses the file's number");
  say("attempts-socket %d\n", attempts);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  expect(connect(reused, (struct sockaddr*)&address, sizeof address) == 0, "connect");
  int server = accept(listener, NULL, NULL);
  expect(write(reused, "abcdefghij", 10) == 10, "write socket");
  expect(read(server, buffer, 10) == 10, "read socket");
  describe("after", reused);
  close(server);
  close(reused);

  /* Closed by stdio (fclose of an fdopen'ed file), reused by a call limpwatch
   * does not interpose (eventfd): counted as what it is now. */
  int file = -1, event = -1;
  attempts = 0;
  while (attempts < kReuseAttempts) {
    ++attempts;
    file = open(path, O_RDONLY);
    expect(file >= 0 && pread(file, buffer, 10, 0) == 10, "open and pread again");
    FILE* stream = fdopen(file, "r");
    expect(stream != NULL && fclose(stream) == 0, "fdopen and fclose");
    event = eventfd(0, 0);
    if (event == file) break;
    close(event);
  }
  expect(event == file, "eventfd reuses the file's number");
  say("attempts-eventfd %d\n", attempts);
  uint64_t one = 1;
  expect(write(event, &one, sizeof one) == sizeof one, "write eventfd");
  expect(read(event, &one, sizeof one) == sizeof one, "read eventfd");
  describe("eventfd", event);
  close(event);
  close(setup);
  close(listener);
  unlink(path);
  return 0;
}

/* ---- duplicated fds count under the kind of what they duplicate ---- */

static int run_dups(const char* directory) {
  char buffer[16];
  char* path = path_in(directory, "dups");
  int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
  expect(fd >= 0, "open");
  expect(pwrite(fd, "0123456789", 10, 0) == 10, "pwrite");
  int copies[5];
  copies[0] = dup(fd);
  copies[1] = dup2(fd, 100);
  copies[2] = dup3(fd, 101, O_CLOEXEC);
  copies[3] = fcntl(fd, F_DUPFD, 200);
  copies[4] = fcntl(fd, F_DUPFD_CLOEXEC, 300);
  expect(copies[1] == 100 && copies[2] == 101 && copies[3] >= 200 && copies[4] >= 300, "dup family");
  for (int i = 0; i < 5; ++i) expect(pread(copies[i], buffer, 10, 0) == 10, "pread copy");
  describe("dup", copies[3]);
  /* dup2 over an open file fd: it is a Unix socket now. */
  int pair[2];
  expect(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0, "socketpair");
  expect(dup2(pair[0], copies[1]) == copies[1], "dup2 over");
  expect(write(copies[1], "1234567", 7) == 7, "write over");
  expect(read(pair[1], buffer, 7) == 7, "read pair");
  describe("over", copies[1]);
  for (int i = 0; i < 5; ++i) close(copies[i]);
  close(pair[0]);
  close(pair[1]);
  close(fd);
  unlink(path);
  return 0;
}

/* ---- fds beyond the fd table: classified on each call. The test runs this
 * with LIMPWATCH_FD_TABLE_SIZE=1024, and fds 1100 and 1101 ---- */

static int run_beyond(const char* directory) {
  struct rlimit limit;
  getrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < 1200) {
    limit.rlim_cur = limit.rlim_max < 1200 ? limit.rlim_max : 1200;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  if (limit.rlim_cur < 1200) {
    say("skip RLIMIT_NOFILE is %ld, below 1200\n", (long)limit.rlim_cur);
    return 0;
  }
  char buffer[16];
  char* path = path_in(directory, "beyond");
  int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
  expect(fd >= 0 && pwrite(fd, "0123456789", 10, 0) == 10, "create");
  expect(dup2(fd, 1100) == 1100, "dup2 to 1100");
  for (int i = 0; i < 3; ++i) expect(pread(1100, buffer, 10, 0) == 10, "pread 1100");
  int pair[2];
  expect(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0, "socketpair");
  expect(dup2(pair[0], 1101) == 1101, "dup2 to 1101");
  expect(write(1101, "abc", 3) == 3 && read(pair[1], buffer, 3) == 3, "socket beyond");
  describe("beyond", 1101);
  close(1100);
  close(1101);
  close(pair[0]);
  close(pair[1]);
  close(fd);
  unlink(path);
  return 0;
}

/* ---- threads: each writes and reads its own file ---- */

struct ThreadJob {
  const char* directory;
  int index;
  int count;
  int size;
};

static void* thread_io(void* argument) {
  struct ThreadJob* job = argument;
  /* path_in's rotating buffers are shared: a thread builds its own path. */
  char path[4096];
  snprintf(path, sizeof path, "%s/thread-%d", job->directory, job->index);
  char* data = calloc(1, (size_t)job->size);
  int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
  expect(fd >= 0, "open thread file");
  for (int i = 0; i < job->count; ++i) expect(pwrite(fd, data, job->size, (off_t)i * job->size) == job->size, "pwrite");
  for (int i = 0; i < job->count; ++i) expect(pread(fd, data, job->size, (off_t)i * job->size) == job->size, "pread");
  close(fd);
  unlink(path);
  free(data);
  return NULL;
}

static int run_threads(const char* directory, int threads, int count, int size) {
  pthread_t ids[64];
  struct ThreadJob jobs[64];
  if (threads > 64) threads = 64;
  for (int i = 0; i < threads; ++i) {
    jobs[i] = (struct ThreadJob){directory, i, count, size};
    pthread_create(&ids[i], NULL, thread_io, &jobs[i]);
  }
  for (int i = 0; i < threads; ++i) pthread_join(ids[i], NULL);
  return 0;
}

/* ---- errors: errno as the C library left it, and counted ---- */

static int run_ebadf(void) {
  char buffer[8];
  errno = 777;
  expect(read(-1, buffer, sizeof buffer) == -1 && errno == EBADF, "read(-1) gives EBADF");
  int fd = open("/dev/null", O_RDONLY);
  expect(fd >= 0, "open /dev/null");
  expect(close(fd) == 0, "close");
  errno = 0;
  expect(write(fd, "x", 1) == -1 && errno == EBADF, "write on a closed fd gives EBADF");
  errno = 0;
  expect(close(fd) == -1 && errno == EBADF, "close twice gives EBADF");
  /* A successful call leaves errno alone. */
  int ends[2];
  expect(pipe(ends) == 0, "pipe");
  errno = 12345;
  expect(write(ends[1], "x", 1) == 1 && errno == 12345, "errno kept across a write");
  expect(read(ends[0], buffer, 1) == 1 && errno == 12345, "errno kept across a read");
  close(ends[0]);
  close(ends[1]);
  return 0;
}

/* Opens files until EMFILE, then sockets until EMFILE (the runtime's own
 * thread may hold an fd for a moment and free it in between), and prints how
 * many of each succeeded. */
static int run_emfile(void) {
  struct rlimit limit = {16, 16};
  expect(setrlimit(RLIMIT_NOFILE, &limit) == 0, "setrlimit");
  int fds[64];
  int files = 0, sockets = 0;
  for (;;) {
    int fd = open("/dev/null", O_RDONLY);
    if (fd < 0) break;
    fds[files++] = fd;
    expect(files < 32, "open stops at 16 fds");
  }
  expect(errno == EMFILE, "open fails with EMFILE");
  for (;;) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) break;
    fds[files + sockets++] = fd;
    expect(sockets < 32, "socket stops at 16 fds");
  }
  expect(errno == EMFILE, "socket fails with EMFILE");
  say("opened %d\n", files);
  say("sockets %d\n", sockets);
  for (int i = 0; i < files + sockets; ++i) close(fds[i]);
  return 0;
}

static int run_enospc(const char* directory) {
  char block[4096];
  memset(block, 'f', sizeof block);
  int fd = open(path_in(directory, "fill"), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  expect(fd >= 0, "open");
  long long written = 0;
  int writes = 0;
  for (;;) {
    ssize_t count = write(fd, block, sizeof block);
    if (count < 0) break;
    written += count;
    ++writes;
  }
  expect(errno == ENOSPC, "write fails with ENOSPC");
  say("written %lld in %d\n", written, writes);
  close(fd);
  unlink(path_in(directory, "fill"));
  return 0;
}

/* ---- POSIX AIO: 4 reads in one lio_listio, 1 aio_write ---- */

static int run_aio(const char* directory) {
  char* path = path_in(directory, "aio");
  int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
  expect(fd >= 0, "open");
  char content[2048];
  memset(content, 'a', sizeof content);
  expect(pwrite(fd, content, sizeof content, 0) == (ssize_t)sizeof content, "pwrite");
  static char buffers[4][512];
  struct aiocb blocks[4];
  struct aiocb* list[4];
  for (int i = 0; i < 4; ++i) {
    memset(&blocks[i], 0, sizeof blocks[i]);
    blocks[i].aio_fildes = fd;
    blocks[i].aio_buf = buffers[i];
    blocks[i].aio_nbytes = 512;
    blocks[i].aio_offset = i * 512;
    blocks[i].aio_lio_opcode = LIO_READ;
    list[i] = &blocks[i];
  }
  expect(lio_listio(LIO_WAIT, list, 4, NULL) == 0, "lio_listio");
  for (int i = 0; i < 4; ++i) expect(aio_return(&blocks[i]) == 512, "aio_return read");
  struct aiocb write_block;
  memset(&write_block, 0, sizeof write_block);
  write_block.aio_fildes = fd;
  write_block.aio_buf = content;
  write_block.aio_nbytes = 300;
  write_block.aio_offset = 4096;
  expect(aio_write(&write_block) == 0, "aio_write");
  const struct aiocb* waiting[1] = {&write_block};
  while (aio_error(&write_block) == EINPROGRESS) aio_suspend(waiting, 1, NULL);
  expect(aio_return(&write_block) == 300, "aio_return write");
  /* Two reads that fail (the fd is write-only): one is only asked
   * aio_error(), as OrangeFS's dbpf does after a failure, the other is
   * reaped with aio_return() too. Each is counted once. */
  int write_only = open(path, O_WRONLY);
  expect(write_only >= 0, "open write-only");
  struct aiocb failing[2];
  for (int i = 0; i < 2; ++i) {
    memset(&failing[i], 0, sizeof failing[i]);
    failing[i].aio_fildes = write_only;
    failing[i].aio_buf = buffers[i];
    failing[i].aio_nbytes = 512;
    expect(aio_read(&failing[i]) == 0, "aio_read write-only");
    const struct aiocb* one[1] = {&failing[i]};
    while (aio_error(&failing[i]) == EINPROGRESS) aio_suspend(one, 1, NULL);
    expect(aio_error(&failing[i]) == EBADF, "failed read reports EBADF");
  }
  expect(aio_return(&failing[1]) == -1, "aio_return of the failed read");
  close(write_only);
  close(fd);
  unlink(path);
  return 0;
}

/* ---- a server and a client in two processes (nsread / ncread) ---- */

static int run_server(int count, int delay_ms) {
  int port = 0;
  int listener = listen_loopback(&port);
  say("port %d\n", port);
  int connection = accept(listener, NULL, NULL);
  expect(connection >= 0, "accept");
  char request[16], response[64];
  memset(response, 'r', sizeof response);
  for (int i = 0; i < count; ++i) {
    expect(recv(connection, request, sizeof request, MSG_WAITALL) == sizeof request, "recv request");
    sleep_ms(delay_ms);  /* the client waits this long for its answer: ncread */
    expect(send(connection, response, sizeof response, 0) == sizeof response, "send response");
  }
  close(connection);
  close(listener);
  return 0;
}

static int run_client(int port, int count, int delay_ms) {
  int connection = connect_loopback(port);
  char request[16], response[64];
  memset(request, 'q', sizeof request);
  for (int i = 0; i < count; ++i) {
    sleep_ms(delay_ms);  /* the server waits this long for the request: nsread */
    expect(send(connection, request, sizeof request, 0) == sizeof request, "send request");
    expect(recv(connection, response, sizeof response, MSG_WAITALL) == sizeof response, "recv response");
  }
  close(connection);
  return 0;
}

/* ---- disk I/O the device sees, for the node metrics ----
 * 256 KiB written and synced every 20 ms: enough for the device counters to
 * move, gentle on a disk other programs share. */

enum { kDiskBlock = 256 * 1024 };

static int run_disk(const char* directory, int milliseconds) {
  char* path = path_in(directory, "limpwatch-disk-test");
  int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_DIRECT, 0600);
  int direct = fd >= 0;
  if (!direct) fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  expect(fd >= 0, "open disk file");
  void* block = NULL;
  expect(posix_memalign(&block, 4096, kDiskBlock) == 0, "posix_memalign");
  memset(block, 'd', kDiskBlock);
  say("started %s\n", direct ? "direct" : "buffered");
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  long long elapsed = 0;
  int blocks = 0;
  while (elapsed < milliseconds) {
    expect(pwrite(fd, block, kDiskBlock, (off_t)(blocks % 16) * kDiskBlock) == kDiskBlock, "pwrite disk");
    expect(fdatasync(fd) == 0, "fdatasync");
    ++blocks;
    sleep_ms(20);
    clock_gettime(CLOCK_MONOTONIC, &now);
    elapsed = (now.tv_sec - start.tv_sec) * 1000LL + (now.tv_nsec - start.tv_nsec) / 1000000;
  }
  close(fd);
  unlink(path);
  free(block);
  say("blocks %d\n", blocks);
  return 0;
}

/* ---- a steady mix for `limpwatch top`: every 10 ms a 4 KiB file write,
 * a pipe round trip and a read that fails with EBADF ---- */

static int run_busy(const char* directory, int milliseconds) {
  char block[4096];
  memset(block, 'b', sizeof block);
  char* path = path_in(directory, "busy");
  int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  expect(fd >= 0, "open busy file");
  int ends[2];
  expect(pipe(ends) == 0, "pipe");
  say("started\n");
  for (int elapsed = 0; elapsed < milliseconds; elapsed += 10) {
    expect(pwrite(fd, block, sizeof block, 0) == (ssize_t)sizeof block, "pwrite busy");
    expect(write(ends[1], block, 64) == 64 && read(ends[0], block, 64) == 64, "pipe round trip");
    expect(read(-1, block, 1) == -1 && errno == EBADF, "read(-1)");
    sleep_ms(10);
  }
  close(ends[0]);
  close(ends[1]);
  close(fd);
  unlink(path);
  return 0;
}

/* ---- for the timing policy: `fast` 4 KiB preads from the page cache, then
 * `slow` UDP receives that each wait for their 2 ms timeout (EAGAIN) ---- */

static int run_timing(const char* directory, int fast, int slow) {
  char* path = path_in(directory, "timing");
  int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
  expect(fd >= 0, "open");
  static char block[1 << 16];
  expect(pwrite(fd, block, sizeof block, 0) == (ssize_t)sizeof block, "pwrite");
  for (int i = 0; i < fast; ++i) expect(pread(fd, block, 4096, (off_t)(i % 16) * 4096) == 4096, "pread");
  for (int i = 0; i < fast / 10; ++i) {
    int again = open(path, O_RDONLY);
    expect(again >= 0, "open again");
    expect(close(again) == 0, "close again");
  }
  int udp = socket(AF_INET, SOCK_DGRAM, 0);
  expect(udp >= 0, "socket");
  struct timeval timeout = {0, 2000};
  expect(setsockopt(udp, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) == 0, "SO_RCVTIMEO");
  for (int i = 0; i < slow; ++i) {
    expect(recv(udp, block, sizeof block, 0) == -1 && (errno == EAGAIN || errno == EWOULDBLOCK), "recv times out");
  }
  close(udp);
  close(fd);
  unlink(path);
  return 0;
}

static int run_idle(int milliseconds) {
  sleep_ms(milliseconds);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    say("usage: io_calls SCENARIO ARGS...\n");
    return 1;
  }
  const char* scenario = argv[1];
  int result = 1;
  if (strcmp(scenario, "files") == 0 && argc == 5) {
    result = run_files(argv[2], atoi(argv[3]), atoi(argv[4]));
  } else if (strcmp(scenario, "tcp") == 0 && argc == 4) {
    result = run_tcp(atoi(argv[2]), atoi(argv[3]));
  } else if (strcmp(scenario, "pipes") == 0 && argc == 4) {
    result = run_pipes(atoi(argv[2]), atoi(argv[3]));
  } else if (strcmp(scenario, "reuse") == 0 && argc == 3) {
    result = run_reuse(argv[2]);
  } else if (strcmp(scenario, "beyond") == 0 && argc == 3) {
    result = run_beyond(argv[2]);
  } else if (strcmp(scenario, "dups") == 0 && argc == 3) {
    result = run_dups(argv[2]);
  } else if (strcmp(scenario, "threads") == 0 && argc == 6) {
    result = run_threads(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
  } else if (strcmp(scenario, "ebadf") == 0) {
    result = run_ebadf();
  } else if (strcmp(scenario, "emfile") == 0) {
    result = run_emfile();
  } else if (strcmp(scenario, "enospc") == 0 && argc == 3) {
    result = run_enospc(argv[2]);
  } else if (strcmp(scenario, "aio") == 0 && argc == 3) {
    result = run_aio(argv[2]);
  } else if (strcmp(scenario, "server") == 0 && argc == 4) {
    result = run_server(atoi(argv[2]), atoi(argv[3]));
  } else if (strcmp(scenario, "client") == 0 && argc == 5) {
    result = run_client(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
  } else if (strcmp(scenario, "disk") == 0 && argc == 4) {
    result = run_disk(argv[2], atoi(argv[3]));
  } else if (strcmp(scenario, "busy") == 0 && argc == 4) {
    result = run_busy(argv[2], atoi(argv[3]));
  } else if (strcmp(scenario, "timing") == 0 && argc == 5) {
    result = run_timing(argv[2], atoi(argv[3]), atoi(argv[4]));
  } else if (strcmp(scenario, "idle") == 0 && argc == 3) {
    result = run_idle(atoi(argv[2]));
  } else {
    say("unknown scenario or wrong arguments: %s\n", scenario);
  }
  if (result == 0) say("ok\n");
  return result;
}
