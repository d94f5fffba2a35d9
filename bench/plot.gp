# SPDX-License-Identifier: GPL-2.0
# gnuplot -e "dir='bench/results'" bench/plot.gp: from the files
# bench/report.py writes in dir,
#  cost.png      cost per operation against pending timers (cost.dat): twheel
#                arms with relative deadlines, twheel-abs the same timers with
#                absolute ones (columns 11-13, after hrtimer's);
#  lateness.png  the lateness distributions (lateness.dat): the share of
#                fires at most x late, all rounds, short and long delays.
if (!exists("dir")) dir = "bench/results"
set terminal pngcairo size 960,600 font ",11"
set output dir."/cost.png"
set title "Cost per operation vs pending timers (QEMU TCG, one boot: compare ratios)"
set xlabel "pending timers"
set ylabel "ns per operation"
set logscale x 10
set logscale y 10
set format x "10^{%L}"
set grid xtics ytics mytics
set key outside right top
set style line 1 lc rgb "#d62728" lw 2 pt 7
set style line 2 lc rgb "#1f77b4" lw 2 pt 5
set style line 3 lc rgb "#2ca02c" lw 2 pt 9
set style line 4 lc rgb "#ff7f0e" lw 2 pt 11
f = dir."/cost.dat"
plot f u 1:2  w lp ls 1 dt 1 t "twheel arm (rel)", \
     f u 1:3  w lp ls 1 dt 2 t "twheel modify (rel)", \
     f u 1:4  w lp ls 1 dt 3 t "twheel cancel", \
     f u 1:11 w lp ls 4 dt 1 t "twheel-abs arm", \
     f u 1:12 w lp ls 4 dt 2 t "twheel-abs modify", \
     f u 1:13 w lp ls 4 dt 3 t "twheel-abs cancel", \
     f u 1:5  w lp ls 2 dt 1 t "timer\\_list arm", \
     f u 1:6  w lp ls 2 dt 2 t "timer\\_list modify", \
     f u 1:7  w lp ls 2 dt 3 t "timer\\_list cancel", \
     f u 1:8  w lp ls 3 dt 1 t "hrtimer arm", \
     f u 1:9  w lp ls 3 dt 2 t "hrtimer modify", \
     f u 1:10 w lp ls 3 dt 3 t "hrtimer cancel"

set output dir."/lateness.png"
set terminal pngcairo size 1200,520 font ",11"
l = dir."/lateness.dat"
set multiplot layout 1,2 title "Lateness: share of fires at most x late (QEMU TCG, one boot, all rounds)"
set xlabel "lateness (us)"
set ylabel "share of fires"
set logscale x 10
unset logscale y
set format x "10^{%L}"
set yrange [0:1.02]
set xrange [1:1e7]
set key inside right bottom
set title "delays 1-50 ms"
plot l u 1:2 w lp ls 1 ps 0.6 t "twheel", l u 1:3 w lp ls 2 ps 0.6 t "timer\\_list", \
     l u 1:4 w lp ls 3 ps 0.6 t "hrtimer"
set title "delays 1-5 s"
plot l u 1:5 w lp ls 1 ps 0.6 t "twheel", l u 1:6 w lp ls 2 ps 0.6 t "timer\\_list", \
     l u 1:7 w lp ls 3 ps 0.6 t "hrtimer"
unset multiplot
