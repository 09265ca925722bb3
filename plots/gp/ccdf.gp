# ccdf.gp - tail of the latency distribution: the fraction of messages slower than x
# (1 - CDF) on log axes, where p99 and p99.9 are read off the dotted lines.
# data: one block per curve (separated by two blank lines): latency_us, fraction above.
# Prelude: ncurves, title0 .. title{ncurves-1}.
set xlabel 'latency (us)'
set ylabel 'fraction of messages slower than x'
set logscale xy
set format y '%g'
set yrange [*:1.5]
set key top right
set arrow 11 from graph 0, first 0.01 to graph 1, first 0.01 nohead lc rgb '#888888' dt 3
set label 11 'p99' at graph 0.01, first 0.01 offset 0, 0.6 tc rgb '#555555'
set arrow 12 from graph 0, first 0.001 to graph 1, first 0.001 nohead lc rgb '#888888' dt 3
set label 12 'p99.9' at graph 0.01, first 0.001 offset 0, 0.6 tc rgb '#555555'
plot for [i=0:ncurves-1] data index i using 1:2 with steps lw 2 title value(sprintf('title%d', i))
