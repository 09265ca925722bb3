# throughput.gp - throughput against the hint.
# data: index, hint label, p50_us, p99_us, throughput_gbps.  Prelude: rec_x (< 0: none).
set style fill solid 0.6 border -1
set boxwidth 0.7
set xlabel 'hint H (bytes)'
set ylabel 'throughput (Gb/s)'
set yrange [0:*]
set xtics rotate by -45 scale 0
set offsets 0.5, 0.5, graph 0.12, 0
if (rec_x >= 0) {
    # in front of the bars (behind them it was hidden)
    set arrow 1 from rec_x, graph 0 to rec_x, graph 1 nohead lw 2 lc rgb '#d62728' dt 2 front
    set label 1 'recommended' at rec_x, graph 0.5 rotate by 90 center offset -1, 0 tc rgb '#d62728' front
}
unset key # the axis says it (a legend box sat on the marker)
plot data using 1:5:xtic(2) with boxes lc rgb '#2ca02c' notitle
