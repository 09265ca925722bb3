# cost_curves.gp - per-size latency of one isolated message on each path, with crossover.
# data: size_bytes, ll_us, bw_us, size label (1B, 1K, 1M as elsewhere in hintsim).
# Prelude: cross_x (0: no crossover), cross_label.
set xlabel 'message size'
set ylabel 'latency of one message (us)'
set logscale x 2
set logscale y
set xtics rotate by -45
if (cross_x > 0) {
    set arrow 1 from cross_x, graph 0 to cross_x, graph 1 nohead lw 2 lc rgb '#d62728' dt 2
    set label 1 cross_label at cross_x, graph 0.96 offset 0.6, 0 tc rgb '#d62728'
}
plot data using 1:2:xtic(4) with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'low-latency path', \
     '' using 1:3 with linespoints lw 2 pt 5 lc rgb '#ff7f0e' title 'bandwidth path'
