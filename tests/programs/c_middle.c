/* Compiled as C without -fexceptions: its exit hook is skipped when an
 * exception unwinds through it. */
void c_middle(void (*callback)(void)) { callback(); }
