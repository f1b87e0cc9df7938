#!/usr/bin/env bash
# Usage: Scripts/reconnect-cycles.sh [CYCLES=5] [FRAMES=600]  (after swift build; PORT=18554 by default)
# Kills (SIGKILL) and restarts `h264 serve --rtsp` CYCLES times on one port under `h264 receive --reconnect`;
# prints the receiver's open file descriptors and VmRSS before each kill.
cd "$(dirname "$0")/.."
B=.build/debug/h264; F=Fixtures/cars_320x240_30f.y4m; PORT=${PORT:-18554}; CYCLES=${1:-5}; FRAMES=${2:-600}
D=$(mktemp -d)
start() { $B serve $F --rtsp 127.0.0.1:$PORT --loop --preset ultrafast --threads 1 --quiet >/dev/null 2>>$D/serve.log & S=$!; }
start; sleep 1.5
$B receive rtsp://127.0.0.1:$PORT/live -o $D/out.h264 --reconnect --frames $FRAMES --idle-timeout 10 2>$D/recv.log & R=$!
for i in $(seq 1 $CYCLES); do
  sleep 2
  echo "cycle $i fds=$(ls /proc/$R/fd 2>/dev/null | wc -l) rss_kb=$(awk '/VmRSS/{print $2}' /proc/$R/status 2>/dev/null)"
  kill -9 $S; wait $S 2>/dev/null; sleep 0.3; start
done
wait $R; echo "receive exit $?"; kill $S
tail -6 $D/recv.log
echo "ffmpeg frames: $(ffmpeg -nostdin -v error -i $D/out.h264 -f framecrc - 2>$D/ff.err | grep -vc '^#') errors: $(wc -c < $D/ff.err)"
echo "dir $D"
