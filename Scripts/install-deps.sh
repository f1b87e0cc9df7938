#!/usr/bin/env bash
# Installs the Debian packages swift-h264 needs: libx264 (the encoder), libx265 (the H.265
# encoder, package trait HEVCEncoding, on by default), libyuv (BGRA input), libavcodec/libavutil
# (the decoder),
# pkg-config, and ffmpeg/ffprobe/x264 (reference decoder and encoder for the tests), valgrind
# (leak check), time (CPU times in Scripts/bench-cli.sh), GStreamer, gst-rtsp-server and
# nginx-rtmp (peers), headless Chromium with chromedriver and selenium (what a browser plays).
# Usage: Scripts/install-deps.sh [--runtime]   (--runtime: only what building and encoding need)
set -euo pipefail
packages=(libx264-dev libx265-dev libyuv-dev libavcodec-dev libavutil-dev pkg-config)
if [ "${1:-}" != "--runtime" ]; then
  packages+=(ffmpeg x264 valgrind time)
  # GStreamer, the second peer in H264CLITests: flvdemux, udpsrc/udpsink, rtph264pay/depay
  # (good), y4menc (base), h264parse (bad), avdec_h264 (libav).
  packages+=(gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-libav)
  # rtspclientsink (RTSP RECORD publisher) for the h264 receive --listen tests.
  packages+=(gstreamer1.0-rtsp)
  # gst-rtsp-server scripted through python3-gi (run with /usr/bin/python3): the RTSP server
  # peer that Examples/RTSPViewer and the examples tests play.
  packages+=(python3-gi gir1.2-gst-rtsp-server-1.0)
  # GLib's TLS backend (GnuTLS): GStreamer's rtsps:// (rtspsrc, rtspclientsink, gst-rtsp-server)
  # in the RTSPS tests.
  packages+=(glib-networking)
  # nginx with the RTMP module: the RTMP server peer (record all) in the RTMP publish tests.
  packages+=(nginx libnginx-mod-rtmp)
  # Headless Chromium driven through python3-selenium (Scripts/chromium-play.py): what a browser
  # plays of the MP4 files we write.
  packages+=(chromium chromium-driver python3-selenium)
  # curl: the HTTP client of the HLS tests (blocking reloads, headers, HTTP/2 over TLS) and the
  # viewers of the hls_serve benchmark.
  packages+=(curl)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
