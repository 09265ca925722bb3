/* lat_hist.h - the streaming latency histogram every summary of a replay is made of.
 *
 * Log-linear bins: LAT_HIST_BINS_PER_OCTAVE (128) per octave of the float latency in units of
 * LAT_HIST_MIN_US (~1 ns), from 1 ns to 2^54 us (~570 years), one bin below and one above.
 * A bin is the float's exponent and top 7 mantissa bits, so no log() per message and O(1)
 * memory per replay whatever its length. A percentile is the nearest-rank order statistic's
 * bin, reported as the bin's centre clamped to the exact min and max: within
 * LAT_HIST_REL_ERR (1/256 = 0.39%) of the exact order statistic for latencies inside the
 * binned range (tests/test_lat_hist.c checks the bound against exact quantiles).
 *
 * Written once for the host and the GPU: model/predict/predict.c's summariser (every engine's
 * figures, and so the CPU sweep's) and the CUDA sweep engine (sweep/sweep_eval_cuda.cu) call
 * these, so the two give the same quantiles for the same latencies, bit for bit.
 */
#ifndef HS_LAT_HIST_H
#define HS_LAT_HIST_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define LAT_HIST_HD __host__ __device__
#else
#define LAT_HIST_HD
#endif

#define LAT_HIST_BINS_PER_OCTAVE 128
#define LAT_HIST_MIN_US (1.0 / 1024.0) /* ~1 ns */
#define LAT_HIST_OCTAVES 64            /* 1 ns .. 2^54 us; above, the last bin */
#define LAT_HIST_NBINS (LAT_HIST_BINS_PER_OCTAVE * LAT_HIST_OCTAVES + 1)
/* Half a bin's width relative to its lower edge: the bound on a percentile's relative error
 * for latencies in LAT_HIST_MIN_US .. 2^54 us. */
#define LAT_HIST_REL_ERR (0.5 / LAT_HIST_BINS_PER_OCTAVE)

/* The bin of a latency of us microseconds, held as a float as every summary holds it (0 for
 * anything at or below LAT_HIST_MIN_US, NaN too; LAT_HIST_NBINS - 1 above the range): us
 * scaled by 2^10 is exact in a float. A double's bin is its float's: rounding commutes with
 * that scaling, and a double just above LAT_HIST_MIN_US whose float is the bound falls in
 * bin 0 either way. */
LAT_HIST_HD static inline size_t lat_hist_bin(float us)
{
    float f;
    uint32_t b, idx;

    if (!(us > (float)LAT_HIST_MIN_US))
        return 0;
    f = us * (float)(1.0 / LAT_HIST_MIN_US);
    memcpy(&b, &f, sizeof(b));
    idx = (b >> 16) - (127u << 7);
    return idx >= LAT_HIST_NBINS - 1 ? LAT_HIST_NBINS - 1 : idx;
}

/* The centre of bin b, in us. */
LAT_HIST_HD static inline double lat_hist_centre_us(size_t b)
{
    return ldexp(1.0 + ((double)(b & 127) + 0.5) / 128.0, (int)(b >> 7)) * LAT_HIST_MIN_US;
}

/* Nearest-rank percentile q in [0,1] of n latencies binned into bins (LAT_HIST_NBINS counts)
 * whose exact minimum and maximum are min_us and max_us: the centre of the bin holding rank
 * ceil(q n), clamped to [min_us, max_us]; max_us beyond the binned range; 0 when n is 0. */
LAT_HIST_HD static inline double lat_hist_pct(const uint32_t *bins, uint64_t n, double min_us,
                                              double max_us, double q)
{
    uint64_t rank, cum = 0;

    if (n == 0)
        return 0;
    rank = (uint64_t)ceil(q * (double)n);
    if (rank < 1)
        rank = 1;
    for (size_t b = 0; b < LAT_HIST_NBINS; b++) {
        cum += bins[b];
        if (cum >= rank) {
            if (b == LAT_HIST_NBINS - 1) /* beyond the binned range: no better bound */
                return max_us;
            double v = lat_hist_centre_us(b);
            return v < min_us ? min_us : v > max_us ? max_us : v;
        }
    }
    return max_us;
}

#endif
