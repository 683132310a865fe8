/* Forks children that call a traced function and then exec, the usual way a
 * server runs another program. With "ok" each child execs /bin/true; with
 * "fail" it execs a path that does not exist, and on the failed exec calls
 * the traced function twice more, says whether its own segment is listed
 * (/dev/shm/limpwatch.NAME.PID) and exits. Prints one line per child:
 * "child PID" (ok) or "child PID listed|unlisted" (fail).
 *
 * Usage: exec_child ok|fail COUNT   (LIMPWATCH_NAME must be set) */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

void child_work(void) { sink += 1; }

static int run_child(int succeed) {
  child_work();
  if (succeed) {
    execl("/bin/true", "true", (char*)NULL);
    return 126;
  }
  execl("/nonexistent/limpwatch-exec-test", "missing", (char*)NULL);
  if (errno != ENOENT) return 3;
  child_work();
  child_work();
  char path[256];
  snprintf(path, sizeof path, "/dev/shm/limpwatch.%s.%d", getenv("LIMPWATCH_NAME"), (int)getpid());
  printf("child %d %s\n", (int)getpid(), access(path, F_OK) == 0 ? "listed" : "unlisted");
  fflush(stdout);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3 || (strcmp(argv[1], "ok") != 0 && strcmp(argv[1], "fail") != 0) || getenv("LIMPWATCH_NAME") == NULL) {
    fprintf(stderr, "usage: LIMPWATCH_NAME=NAME exec_child ok|fail COUNT\n");
    return 2;
  }
  int succeed = strcmp(argv[1], "ok") == 0;
  int count = atoi(argv[2]);
  fflush(stdout);
  for (int index = 0; index < count; ++index) {
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) exit(run_child(succeed));
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
    if (succeed) printf("child %d\n", (int)child);
  }
  return 0;
}
