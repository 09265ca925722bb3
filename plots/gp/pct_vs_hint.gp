# pct_vs_hint.gp - p50 and p99 latency against the hint.
# data: index, hint label, p50_us, p99_us, throughput_gbps.
# Prelude: rec_x (< 0: none), nbars.
set xlabel 'hint H (bytes; messages <= H take the low-latency path)'
set ylabel 'latency (us)'
set logscale y
set xtics rotate by -45
set offsets 0.3, 0.3, 0, 0
if (rec_x >= 0) {
    set arrow 1 from rec_x, graph 0 to rec_x, graph 1 nohead lw 2 lc rgb '#d62728' dt 2
    # at the top, on the side of the line away from the nearer frame edge (beside the line
    # at mid-height it sat on the y axis when the first hint was recommended)
    rec_side = rec_x < (nbars - 1) / 2.0 ? 'left offset 0.5, 0' : 'right offset -0.5, 0'
    eval sprintf("set label 1 'recommended' at %d, graph 0.95 %s tc rgb '#d62728'", rec_x, rec_side)
}
set key bottom right width 2 samplen 3 opaque
plot data using 1:3:xtic(2) with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'p50', \
     '' using 1:4 with linespoints lw 2 pt 5 lc rgb '#ff7f0e' title 'p99'
