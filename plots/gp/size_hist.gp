# size_hist.gp - the trace's message-size histogram, recommended hint marked.
# data: log2(class upper bound), class label, count.  Prelude: hint_x (< 0: hint 0), hint_label.
set style fill solid 0.6 border -1
set boxwidth 0.8
set xlabel 'message size class (upper bound, bytes); classes <= the hint take the LL path'
set ylabel 'messages'
set xtics rotate by -45 scale 0
set yrange [0:*]
set offsets 0.5, 0.5, graph 0.12, 0
if (hint_x >= 0) {
    set arrow 1 from hint_x, graph 0 to hint_x, graph 1 nohead lw 2 lc rgb '#d62728' dt 2 front
    set label 1 hint_label at hint_x, graph 0.96 offset 0.6, 0 tc rgb '#d62728' front
} else {
    set label 1 hint_label at graph 0.02, graph 0.96 tc rgb '#d62728' front
}
# no legend (the axes say it): one in the plot hid the hint's label when the hint was on
# the right
unset key
plot data using 1:3:xtic(2) with boxes lc rgb '#1f77b4' notitle
