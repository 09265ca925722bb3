# pred_meas.gp - predicted against measured latency per hint (validate).
# data: hint label, measured p50, predicted p50, measured p99, predicted p99.
set xlabel 'measured latency (us)'
set ylabel 'predicted latency (us)'
set logscale xy
set size square
set key top left
stats data using 2:3 nooutput
lo = STATS_min_x < STATS_min_y ? STATS_min_x : STATS_min_y
stats data using 4:5 nooutput
hi = STATS_max_x > STATS_max_y ? STATS_max_x : STATS_max_y
set xrange [lo / 1.5 : hi * 1.5]
set yrange [lo / 1.5 : hi * 1.5]
plot x with lines dt 2 lc rgb '#888888' title 'predicted = measured', \
     data using 2:3 with points pt 7 ps 1.5 lc rgb '#1f77b4' title 'p50 per hint', \
     '' using 2:3:1 with labels offset 1, 0.5 left notitle, \
     '' using 4:5 with points pt 5 ps 1.5 lc rgb '#ff7f0e' title 'p99 per hint'
