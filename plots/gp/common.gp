# common.gp - settings shared by every hintsim figure (prepended to each script).
# The generated prelude defines: data, png_out, svg_out, title_text, subtitle.
set terminal pngcairo size 960,560 noenhanced font 'sans,10' background '#ffffff'
set output png_out
set title title_text . "\n" . subtitle
set grid ytics lc rgb '#dddddd'
set key top left box opaque
set border 3
set tics nomirror
