# cdf.gp - latency CDF of several hints.
# data: one block per curve (separated by two blank lines): latency_us, fraction.
# Prelude: ncurves, title0 .. title{ncurves-1}.
set xlabel 'latency (us)'
set ylabel 'fraction of messages <= x'
set logscale x
set yrange [0:1.02]
set key bottom right
plot for [i=0:ncurves-1] data index i using 1:2 with lines lw 2 title value(sprintf('title%d', i))
