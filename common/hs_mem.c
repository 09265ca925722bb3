/* hs_mem.c - large arrays on huge pages (hs_mem.h). */
#include "common/hs_mem.h"

#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

void *hs_alloc_big(size_t n)
{
    if (n < HS_MEM_BIG_BYTES)
        return malloc(n);
    size_t len = (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *p = aligned_alloc(HUGE_PAGE, len);
    /* advice only: a kernel without THP (or with it off) ignores it or says EINVAL, and
     * the array works on small pages alike */
    if (p)
        (void)madvise(p, len, MADV_HUGEPAGE);
    return p;
}
