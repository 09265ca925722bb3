/* trace_crc.c - CRC-32 (IEEE 802.3 / zlib / PNG, reflected polynomial 0xEDB88320).
 *
 * Two implementations of the same function: slice-by-8 tables (portable), and on x86-64
 * CPUs with PCLMULQDQ a carry-less-multiply folding loop (Intel's "Fast CRC Computation
 * for Generic Polynomials Using PCLMULQDQ", the constants zlib/Chromium and Linux use for
 * this polynomial) for the 64-byte-aligned bulk of long buffers, the tail by tables. The
 * reader checks every block's CRC, so this is most of the cost of reading a trace.
 * tests/test_trace_format.c checks both paths against a bitwise reference. */
#include <stddef.h>
#include <stdint.h>

#include "traces/trace_format.h"
#include "traces/trace_crc_table.h"

/* State in and out is the inverted CRC (as in zlib's internal loops). */
static uint32_t crc_slice8(uint32_t crc, const uint8_t *p, size_t len)
{
    /* slice-by-8: eight table lookups per 8 input bytes, no byte-serial dependency */
    while (len >= 8) {
        uint32_t lo = trace_get_u32(p) ^ crc, hi = trace_get_u32(p + 4);
        crc = g_trace_crc_tab[7][lo & 0xff] ^ g_trace_crc_tab[6][(lo >> 8) & 0xff] ^
              g_trace_crc_tab[5][(lo >> 16) & 0xff] ^ g_trace_crc_tab[4][lo >> 24] ^
              g_trace_crc_tab[3][hi & 0xff] ^ g_trace_crc_tab[2][(hi >> 8) & 0xff] ^
              g_trace_crc_tab[1][(hi >> 16) & 0xff] ^ g_trace_crc_tab[0][hi >> 24];
        p += 8;
        len -= 8;
    }
    while (len--)
        crc = g_trace_crc_tab[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define CLMUL_TARGET __attribute__((target("pclmul,sse4.1")))

/* Fold four 128-bit lanes over 64-byte chunks, then to 128, 64 and 32 bits (Barrett).
 * len >= 64 and a multiple of 16. */
CLMUL_TARGET static uint32_t crc_clmul(uint32_t crc, const uint8_t *buf, size_t len)
{
    static const uint64_t k1k2[2] __attribute__((aligned(16))) = {0x0154442bd4, 0x01c6e41596};
    static const uint64_t k3k4[2] __attribute__((aligned(16))) = {0x01751997d0, 0x00ccaa009e};
    static const uint64_t k5k0[2] __attribute__((aligned(16))) = {0x0163cd6124, 0x0000000000};
    static const uint64_t poly[2] __attribute__((aligned(16))) = {0x01db710641, 0x01f7011641};
    __m128i x0, x1, x2, x3, x4, x5, x6, x7, x8;

    x1 = _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x00));
    x2 = _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x10));
    x3 = _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x20));
    x4 = _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x30));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
    x0 = _mm_load_si128((const __m128i *)(const void *)k1k2);
    buf += 64;
    len -= 64;
    while (len >= 64) {
        x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
        x6 = _mm_clmulepi64_si128(x2, x0, 0x00);
        x7 = _mm_clmulepi64_si128(x3, x0, 0x00);
        x8 = _mm_clmulepi64_si128(x4, x0, 0x00);
        x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
        x2 = _mm_clmulepi64_si128(x2, x0, 0x11);
        x3 = _mm_clmulepi64_si128(x3, x0, 0x11);
        x4 = _mm_clmulepi64_si128(x4, x0, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x5),
                           _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x00)));
        x2 = _mm_xor_si128(_mm_xor_si128(x2, x6),
                           _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x10)));
        x3 = _mm_xor_si128(_mm_xor_si128(x3, x7),
                           _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x20)));
        x4 = _mm_xor_si128(_mm_xor_si128(x4, x8),
                           _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x30)));
        buf += 64;
        len -= 64;
    }
    /* four lanes into one */
    x0 = _mm_load_si128((const __m128i *)(const void *)k3k4);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x3), x5);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x4), x5);
    while (len >= 16) {
        x2 = _mm_loadu_si128((const __m128i *)(const void *)buf);
        x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
        x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
        buf += 16;
        len -= 16;
    }
    /* 128 -> 64 bits */
    x2 = _mm_clmulepi64_si128(x1, x0, 0x10);
    x3 = _mm_setr_epi32(~0, 0, ~0, 0);
    x1 = _mm_srli_si128(x1, 8);
    x1 = _mm_xor_si128(x1, x2);
    x0 = _mm_loadl_epi64((const __m128i *)(const void *)k5k0);
    x2 = _mm_srli_si128(x1, 4);
    x1 = _mm_and_si128(x1, x3);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    /* Barrett reduction to 32 bits */
    x0 = _mm_load_si128((const __m128i *)(const void *)poly);
    x2 = _mm_and_si128(x1, x3);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x10);
    x2 = _mm_and_si128(x2, x3);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}

static int have_clmul(void)
{
    return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}
#else
static int have_clmul(void) { return 0; }
static uint32_t crc_clmul(uint32_t crc, const uint8_t *buf, size_t len)
{
    return crc_slice8(crc, buf, len);
}
#endif

uint32_t trace_crc32_tables(uint32_t crc, const void *buf, size_t len)
{
    return ~crc_slice8(~crc, buf, len);
}

uint32_t trace_crc32(uint32_t crc, const void *buf, size_t len)
{
    const uint8_t *p = buf;

    crc = ~crc;
    if (len >= 64 && have_clmul()) {
        size_t bulk = len & ~(size_t)15;
        crc = crc_clmul(crc, p, bulk);
        p += bulk;
        len -= bulk;
    }
    return ~crc_slice8(crc, p, len);
}
