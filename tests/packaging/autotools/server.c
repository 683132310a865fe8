/* A server-shaped program: a request loop on the main thread and a
 * "network" thread, with known call counts:
 *   handle_request 12, storage_write_block 36, checksum 36, storage_sync 4,
 *   poll_network 25 (on its own thread). */
#include <pthread.h>
#include <stdio.h>

#include "storage.h"

static volatile int polled;

static void poll_network(int round) { polled += round; }

static void *network_thread(void *arg) {
  (void)arg;
  for (int round = 0; round < 25; ++round) poll_network(round);
  return NULL;
}

static int handle_request(int request) {
  int result = 0;
  for (int part = 0; part < 3; ++part) result += storage_write_block(request * 3 + part);
  if (request % 3 == 0) result += storage_sync();
  return result;
}

int main(void) {
  pthread_t network;
  if (pthread_create(&network, NULL, network_thread, NULL) != 0) return 2;
  long total = 0;
  for (int request = 0; request < 12; ++request) total += handle_request(request);
  pthread_join(network, NULL);
  printf("%ld %d\n", total, polled);
  return polled == 300 ? 0 : 1;
}
