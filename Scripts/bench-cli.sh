#!/usr/bin/env bash
# `h264 encode` against the x264 CLI and `ffmpeg -c:v libx264` on the same 720p y4m with the
# same settings (ultrafast, zerolatency, CRF 23, High profile; THREADS, default 1, 0 = each
# tool's automatic choice), RUNS runs each interleaved (default 11); prints the median and the
# best wall time, the median CPU time (user + system), fps and the ratios of the medians.
# On a shared virtual machine single runs vary by ±20%: compare medians of many runs.
# Then `h264 decode` against `ffmpeg -f yuv4mpegpipe` on the encoded stream, the same way.
# Needs x264, ffmpeg and a release build of h264 (swift build -c release --product h264).
set -euo pipefail
[ -x /usr/bin/time ] || "$(dirname "$0")/install-deps.sh"
cd "$(dirname "$0")/.."
THREADS=${THREADS:-1}
RUNS=${RUNS:-11}
FRAMES=${FRAMES:-150}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
input="$work/cars_1280x720.y4m"
# The 30 cars frames, looped and scaled to 1280x720.
ffmpeg -nostdin -loglevel error -stream_loop $(( (FRAMES + 29) / 30 - 1 )) -i Fixtures/cars_320x240_30f.y4m \
    -vf scale=1280:720 -pix_fmt yuv420p -frames:v "$FRAMES" "$input"
h264=${H264:-.build/release/h264}
declare -A times cpu
run() { # name command…
    local name=$1; shift
    local line
    /usr/bin/time -o "$work/time" -f "%e %U %S" "$@" >/dev/null 2>&1
    line=$(tail -1 "$work/time")
    times[$name]+="$(echo "$line" | awk '{print $1}') "
    cpu[$name]+="$(echo "$line" | awk '{print $2 + $3}') "
}
for _ in $(seq "$RUNS"); do
    run h264 "$h264" encode "$input" -o "$work/h264.h264" --preset ultrafast --tune zerolatency --crf 23 \
        --profile high --threads "$THREADS" --quiet
    run x264 x264 --preset ultrafast --tune zerolatency --crf 23 --profile high --threads "$THREADS" \
        --quiet -o "$work/x264.264" "$input"
    run ffmpeg ffmpeg -nostdin -y -loglevel error -i "$input" -c:v libx264 -preset ultrafast -tune zerolatency -crf 23 \
        -profile:v high -threads "$THREADS" -f h264 "$work/ffmpeg.h264"
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
best() { tr ' ' '\n' | grep -v '^$' | sort -g | head -1; }
h=$(echo "${times[h264]}" | median); x=$(echo "${times[x264]}" | median); f=$(echo "${times[ffmpeg]}" | median)
printf '%d frames 1280x720, threads %s, median of %d interleaved runs (best run; median CPU time)\n' "$FRAMES" "$THREADS" "$RUNS"
for tool in h264 x264 ffmpeg; do
    m=$(echo "${times[$tool]}" | median)
    printf '  %-7s %6.3f s  %6.1f fps  (best %6.3f s; CPU %6.3f s)\n' "$tool" "$m" "$(echo "$FRAMES / $m" | bc -l)" \
        "$(echo "${times[$tool]}" | best)" "$(echo "${cpu[$tool]}" | median)"
done
printf '  fps ratio h264/x264   %.3f (goal >= 1.0)\n' "$(echo "$x / $h" | bc -l)"
printf '  fps ratio h264/ffmpeg %.3f (goal >= 1.08)\n' "$(echo "$f / $h" | bc -l)"
cmp -s "$work/h264.h264" "$work/x264.264" && echo "  h264 and x264 outputs: identical bytes" || echo "  h264 and x264 outputs differ (x264 CLI writes an SEI with its options)"

# `h264 decode` against `ffmpeg -i IN -f yuv4mpegpipe OUT` on the stream just encoded (720p, same
# threads), interleaved; the two y4m outputs must be identical.
times[h264dec]=""; times[ffmpegdec]=""; cpu[h264dec]=""; cpu[ffmpegdec]=""
for _ in $(seq "$RUNS"); do
    run h264dec "$h264" decode "$work/ffmpeg.h264" -o "$work/h264.y4m" --threads "$THREADS" --quiet
    run ffmpegdec ffmpeg -nostdin -y -loglevel error -threads "$THREADS" -i "$work/ffmpeg.h264" -f yuv4mpegpipe "$work/ffmpeg.y4m"
done
hd=$(echo "${times[h264dec]}" | median); fd=$(echo "${times[ffmpegdec]}" | median)
printf 'decode %d frames 1280x720 to y4m, threads %s, median of %d interleaved runs\n' "$FRAMES" "$THREADS" "$RUNS"
for tool in h264dec ffmpegdec; do
    m=$(echo "${times[$tool]}" | median)
    printf '  %-9s %6.3f s  %6.1f fps  (best %6.3f s; CPU %6.3f s)\n' "$tool" "$m" "$(echo "$FRAMES / $m" | bc -l)" \
        "$(echo "${times[$tool]}" | best)" "$(echo "${cpu[$tool]}" | median)"
done
printf '  fps ratio h264 decode/ffmpeg %.3f (goal >= 1.0)\n' "$(echo "$fd / $hd" | bc -l)"
cmp -s "$work/h264.y4m" "$work/ffmpeg.y4m" && echo "  h264 decode and ffmpeg y4m outputs: identical bytes" || echo "  h264 decode and ffmpeg y4m outputs DIFFER"
