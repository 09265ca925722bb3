# cost_terms.gp - where each candidate's time goes: the engine's cost terms per message,
# stacked (the "why" of the recommendation as a picture).
# data: index, hint label, queue, drain, coalesce, L1, base (us per message).
# Prelude: rec_x (< 0: none), nbars.
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.7
set xlabel 'hint H (bytes)'
set ylabel 'us per message'
set yrange [0:*]
set xtics rotate by -45 scale 0
set offsets 0, 0, graph 0.12, 0
set key top left horizontal opaque
if (rec_x >= 0) {
    rec_just = rec_x == 0 ? 'left' : (rec_x >= nbars - 1 ? 'right' : 'center')
    rec_dx = rec_x == 0 ? -0.35 : (rec_x >= nbars - 1 ? 0.35 : 0)
    eval sprintf("set label 1 'recommended' at %g, graph 0.95 %s tc rgb '#d62728' front", rec_x + rec_dx, rec_just)
    set arrow 1 from rec_x, graph 0.93 to rec_x, graph 0.89 lc rgb '#d62728' lw 2 front
}
plot data using 3:xtic(2) title 'queue' lc rgb '#d62728', \
     '' using 4 title 'drain' lc rgb '#ff7f0e', \
     '' using 5 title 'coalesce' lc rgb '#9467bd', \
     '' using 6 title 'L1' lc rgb '#8c564b', \
     '' using 7 title 'base' lc rgb '#1f77b4'
