/* The "trove" of the test server: a block store in a static library. */
#include "storage.h"

static int blocks[64];

static int checksum(int value) { return value * 31 + 7; }

int storage_write_block(int block) {
  blocks[block % 64] = checksum(block);
  return blocks[block % 64];
}

int storage_sync(void) {
  int total = 0;
  for (int i = 0; i < 64; ++i) total += blocks[i] != 0;
  return total;
}
