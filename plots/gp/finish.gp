# finish.gp - the same figure again as SVG (appended to each script).
set terminal svg size 960,560 noenhanced font 'sans,10' background '#ffffff'
set output svg_out
replot
unset output
