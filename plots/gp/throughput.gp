# throughput.gp - throughput against the hint.
# data: index, hint label, p50_us, p99_us, throughput_gbps.
# Prelude: rec_x (< 0: none), nbars.
set style fill solid 0.6 border -1
set boxwidth 0.7
set xlabel 'hint H (bytes)'
set ylabel 'throughput (Gb/s)'
set yrange [0:*]
set xtics rotate by -45 scale 0
set offsets 0.5, 0.5, graph 0.12, 0
# The recommended bar is drawn in red and named above every bar (the top offset keeps the
# tallest bar below 0.88 of the height): a label on the bar or beside it hid a bar or sat on
# the y axis. Its text is justified inwards at either end so it stays inside the frame.
if (rec_x >= 0) {
    rec_just = rec_x == 0 ? 'left' : (rec_x >= nbars - 1 ? 'right' : 'center')
    rec_dx = rec_x == 0 ? -0.35 : (rec_x >= nbars - 1 ? 0.35 : 0)
    eval sprintf("set label 1 'recommended' at %g, graph 0.95 %s tc rgb '#d62728' front", rec_x + rec_dx, rec_just)
}
unset key # the axis says it (a legend box sat on the marker)
plot data using 1:5:($1 == rec_x ? 0xd62728 : 0x2ca02c):xtic(2) with boxes lc rgb variable notitle
