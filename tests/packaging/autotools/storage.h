#ifndef LWSERVER_STORAGE_H
#define LWSERVER_STORAGE_H
int storage_write_block(int block);
int storage_sync(void);
#endif
