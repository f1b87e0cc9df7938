#!/usr/bin/env bash
# Runs the built example programs against each other and against real peers, as .ci/run's
# examples step (all on 127.0.0.1):
#   - Examples/LiveCamera serves the cars clip over RTSP and publishes it to nginx-rtmp, through
#     the public API alone; Examples/RTSPViewer decodes 100 frames from it; ffprobe reads it over
#     TCP without a warning and over UDP without an error; FFmpeg decodes 60 frames of it from
#     nginx without an error line; SIGINT ends LiveCamera with status 0;
#   - RTSPViewer decodes 100 frames from gst-rtsp-server (Scripts/gst-rtsp-server.py): an H.264
#     camera, an H.265 camera, and an H.264 camera that also sends G.711 audio;
#   - RTSPViewer on a URL nobody serves: one line on standard error and status 1.
# Usage: Scripts/examples-check.sh PATH/TO/LiveCamera PATH/TO/RTSPViewer
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: $0 LIVECAMERA RTSPVIEWER" >&2; exit 2; }
camera_bin=$1 viewer_bin=$2
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
fail() { echo "error: examples-check: $*" >&2; exit 1; }

# Starts "$@" with its standard output on a pipe and reads its first line (the URL it serves)
# into $url; its pid goes to $pid.
start_server() {
  local fd line
  exec {fd}< <(exec "$@")
  pid=$!
  pids+=("$pid")
  read -r -t 60 -u "$fd" line || fail "$* printed no URL within 60 s"
  url=$(grep -o 'rtsp://127\.0\.0\.1:[0-9]*/[a-z]*' <<<"$line") || fail "$* printed no URL: $line"
  echo "$line"
}

# RTSPViewer URL 100: the last line must be frame 100 at 320x240.
view() {
  local out
  out=$(timeout 60 "$viewer_bin" "$1" 100) || fail "RTSPViewer $1 100 failed (status $?)"
  echo "$out" | sed -n '1p;$p'
  tail -1 <<<"$out" | grep -q "^frame 100 320x240 pts [0-9.]*$" || fail "RTSPViewer did not print 100 frames of $1"
}

# nginx with the RTMP module on a free port, its files in a directory of its own.
nginx_dir=$(mktemp -d)
nginx_port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$nginx_dir/logs"
cat >"$nginx_dir/nginx.conf" <<EOF
load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
daemon off;
master_process off;
error_log stderr;
pid $nginx_dir/nginx.pid;
events { worker_connections 64; }
rtmp { server { listen 127.0.0.1:$nginx_port; application live { live on; } } }
EOF
/usr/sbin/nginx -p "$nginx_dir" -c "$nginx_dir/nginx.conf" 2>"$nginx_dir/stderr" &
nginx=$!
pids+=("$nginx")
for _ in $(seq 200); do
  (exec 3<>"/dev/tcp/127.0.0.1/$nginx_port") 2>/dev/null && break
  kill -0 "$nginx" 2>/dev/null || fail "nginx did not start: $(cat "$nginx_dir/stderr")"
  sleep 0.1
done
(exec 3<>"/dev/tcp/127.0.0.1/$nginx_port") 2>/dev/null || fail "nginx does not listen on $nginx_port within 20 s"

start_server "$camera_bin" Fixtures/cars_320x240_30f.y4m 0 "rtmp://127.0.0.1:$nginx_port/live/camera"
camera=$pid camera_url=$url
echo "-- RTSPViewer $camera_url 100"
view "$camera_url"
echo "-- ffprobe -v warning -rtsp_transport tcp $camera_url"
probe=$(timeout 30 ffprobe -v warning -rtsp_transport tcp -show_entries stream=codec_name,width,height -of compact "$camera_url" 2>"${TMPDIR:-/tmp}/probe.$$") \
  || fail "ffprobe over TCP failed: $(cat "${TMPDIR:-/tmp}/probe.$$")"
[ ! -s "${TMPDIR:-/tmp}/probe.$$" ] || fail "ffprobe over TCP warned: $(cat "${TMPDIR:-/tmp}/probe.$$")"
echo "$probe"; grep -q "codec_name=h264|width=320|height=240" <<<"$probe" || fail "ffprobe over TCP: $probe"
echo "-- ffprobe -v error -rtsp_transport udp $camera_url"
probe=$(timeout 30 ffprobe -v error -rtsp_transport udp -show_entries stream=codec_name,width,height -of compact "$camera_url" 2>"${TMPDIR:-/tmp}/probe.$$") \
  || fail "ffprobe over UDP failed: $(cat "${TMPDIR:-/tmp}/probe.$$")"
[ ! -s "${TMPDIR:-/tmp}/probe.$$" ] || fail "ffprobe over UDP reported an error: $(cat "${TMPDIR:-/tmp}/probe.$$")"
rm -f "${TMPDIR:-/tmp}/probe.$$"
echo "$probe"; grep -q "codec_name=h264|width=320|height=240" <<<"$probe" || fail "ffprobe over UDP: $probe"
echo "-- ffmpeg -v error -i rtmp://127.0.0.1:$nginx_port/live/camera -frames:v 60 (LiveCamera's RTMP sink, through nginx)"
crc=$(timeout 60 ffmpeg -nostdin -v error -i "rtmp://127.0.0.1:$nginx_port/live/camera" -frames:v 60 -f framecrc - 2>"${TMPDIR:-/tmp}/rtmp.$$") \
  || fail "ffmpeg from nginx failed: $(cat "${TMPDIR:-/tmp}/rtmp.$$")"
[ ! -s "${TMPDIR:-/tmp}/rtmp.$$" ] || fail "ffmpeg from nginx reported an error: $(cat "${TMPDIR:-/tmp}/rtmp.$$")"
rm -f "${TMPDIR:-/tmp}/rtmp.$$"
frames=$(grep -vc '^#' <<<"$crc" || true)
echo "$frames frames decoded"
[ "$frames" -eq 60 ] || fail "ffmpeg decoded $frames frames from nginx, not 60"
echo "-- SIGINT LiveCamera"
kill -INT "$camera"
status=0; wait "$camera" || status=$?
[ "$status" -eq 0 ] || fail "LiveCamera exited with status $status after SIGINT"
kill "$nginx" 2>/dev/null || true; wait "$nginx" 2>/dev/null || true
rm -rf "$nginx_dir"

start_server /usr/bin/python3 Scripts/gst-rtsp-server.py
gst=$pid
echo "-- RTSPViewer $url 100"
view "$url"
kill -TERM "$gst"; wait "$gst" || true

start_server /usr/bin/python3 Scripts/gst-rtsp-server.py 0 --codec h265
gst=$pid
echo "-- RTSPViewer $url 100 (an H.265 camera: x265enc, rtph265pay)"
view "$url"
kill -TERM "$gst"; wait "$gst" || true

start_server /usr/bin/python3 Scripts/gst-rtsp-server.py 0 --audio pcma
gst=$pid
echo "-- RTSPViewer $url 100 (an H.264 camera that also sends G.711 audio)"
view "$url"
kill -TERM "$gst"; wait "$gst" || true

echo "-- RTSPViewer rtsp://127.0.0.1:1/nothing (nobody serves it)"
status=0; message=$(timeout 30 "$viewer_bin" rtsp://127.0.0.1:1/nothing 2>&1 >/dev/null) || status=$?
echo "$message (status $status)"
[ "$status" -eq 1 ] && [ "$(wc -l <<<"$message")" -eq 1 ] || fail "RTSPViewer on an unplayable URL: status $status, $message"
echo "examples-check: ok"
