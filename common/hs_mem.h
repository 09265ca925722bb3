/* hs_mem.h - large arrays that a replay streams through (trace records, per-message
 * outputs): backed by transparent huge pages where the kernel allows it, so that their
 * first touch faults once per 2 MiB instead of once per 4 KiB. */
#ifndef HS_MEM_H
#define HS_MEM_H

#include <stddef.h>

/* At or above this many bytes an array is 2 MiB aligned and advised MADV_HUGEPAGE. */
#define HS_MEM_BIG_BYTES ((size_t)4 << 20)

/* n bytes, uninitialised, for a large array (malloc below HS_MEM_BIG_BYTES); NULL when
 * out of memory. The caller owns it and frees it with free(); realloc keeps it valid. */
void *hs_alloc_big(size_t n);

#endif
