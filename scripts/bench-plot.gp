# make bench's scaling plot (scripts/bench.sh): four panels from the tables
# it writes, PNG on stdout.  usage: gnuplot -e "dir='build/bench'" bench-plot.gp
set terminal pngcairo size 1400,1000 font ",10"
if (!exists("dir")) dir = "build/bench"
set multiplot layout 2,2 title "Spyre emulator: how cost grows (make bench)"
set grid
set key top left
set yrange [0:*]

set title "Engine matmul on the host"
set xlabel "n (n x n x n)"
set ylabel "GFLOPS"
set logscale x 2
plot dir."/scaling-engine.tsv" using 1:2 with linespoints title "fp16", \
     "" using 1:3 with linespoints title "bf16"

set title "Card DMA against host memcpy"
set xlabel "bytes per copy"
set ylabel "GB/s"
set logscale x 2
set xrange [3000:4e8]
set xtics ("4 KiB" 4096, "64 KiB" 65536, "1 MiB" 1048576, "16 MiB" 16777216, \
           "256 MiB" 268435456)
plot dir."/scaling-dma.tsv" using 1:2 with linespoints title "host to device", \
     "" using 1:3 with linespoints title "device to device", \
     "" using 1:4 with linespoints title "host memcpy"

set xtics autofreq
set autoscale x
set title "Empty jobs, guest (TCG)"
set xlabel "processes submitting at once"
set ylabel "jobs/s"
set logscale x 2
plot dir."/scaling-jobs.tsv" using 1:2 with linespoints title "null jobs"

set title "Decoder example, graph replay, guest (TCG)"
set xlabel "layers"
set ylabel "tokens/s"
unset logscale x
plot dir."/scaling-decoder.tsv" using 1:2 with linespoints title "prefill", \
     "" using 1:3 with linespoints title "decode"
unset multiplot
