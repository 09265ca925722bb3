# timeline.gp - latency of every message over the trace's time, by path.
# data: two blocks (separated by two blank lines): messages of at most the hint (LL) and
# above it (BW); each line post_ms, latency_us (the slowest of its class in each bucket of
# consecutive messages). Prelude: bucket (messages per bucket), hint_text.
set xlabel 'post time (ms since the first post)'
set ylabel 'latency (us)'
set logscale y
set key top right opaque
plot data index 0 using 1:2 with points pt 7 ps 0.4 lc rgb '#d62728' title 'size <= hint (LL path)', \
     data index 1 using 1:2 with points pt 7 ps 0.4 lc rgb '#1f77b4' title 'size > hint (BW path)'
