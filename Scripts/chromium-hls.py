#!/usr/bin/python3
# Plays a live HLS or LL-HLS playlist (http://127.0.0.1:PORT/live/index.m3u8, served with
# `Access-Control-Allow-Origin: *`) in headless Chromium (Debian's chromium + chromium-driver, through
# python3-selenium), from a page of another origin: Scripts/hls-harness.html, served by a small HTTP
# server of this script on 127.0.0.1.
#   --mse (the default): our own Media Source Extensions player. It reads the media playlist
#     (EXT-X-MAP, EXTINF, EXT-X-PART, EXT-X-PRELOAD-HINT, EXT-X-SERVER-CONTROL, EXT-X-MEDIA-SEQUENCE,
#     EXT-X-DISCONTINUITY, EXT-X-PROGRAM-DATE-TIME, EXT-X-ENDLIST), starts at the last independent
#     part at least PART-HOLD-BACK from the live edge (without parts: the last segment at least
#     HOLD-BACK, by default 3 target durations, from it), appends the init segment and then each part
#     (or whole segment) to one SourceBuffer (`video/mp4; codecs="avc1.PPCCLL,mp4a.40.2"` read from
#     the init segment's avcC and esds, or "opus"), reloads with blocking requests
#     (`?_HLS_msn=M&_HLS_part=P`, fetching the EXT-X-PRELOAD-HINT part meanwhile) or, without parts,
#     every target duration, appends a new init segment on a new EXT-X-MAP or an
#     EXT-X-DISCONTINUITY (changeType when the codecs change; the new timeline placed where the last
#     one ended), and seeks forward (to the hold back) when more than the hold back + 1 s behind
#     the buffered end with parts (EXT-X-PART-INF), max(3 s, the hold back + 2 segments) without.
#   --native: `<video src=PLAYLIST muted autoplay>`: Chromium 156 plays HLS itself, from another
#     origin too (no proxy needed: without `crossorigin` even with no CORS headers; with it, as
#     --frame-numbers and --audio-analyser set it, CORS is needed). Its player fetches whole
#     segments only (no parts, no blocking reloads), starting 3 segments from the end, and plays
#     across EXT-X-DISCONTINUITY and a new EXT-X-MAP.
# Plays for --seconds after the first frame (waiting at most --timeout for it), then prints one JSON
# object on standard output:
#   {"mode", "error": null or text, "decodedFrames", "droppedFrames", "audioDecoded" (by
#    "audioMeasure": "webkitAudioDecodedByteCount" > 0, as "audioDecodedBytes"; or, with
#    --audio-analyser or where Chromium lacks that property, "analyser": an AnalyserNode on the
#    unmuted element's output saw a non-zero sample, the largest as "audioPeak"; both work headless),
#    "stalls" ('waiting' after playback advanced, less than 0.5 s buffered ahead), "stalledAt": [s…],
#    "underflows" ('waiting' with more buffered: the decoder fell behind on a busy machine),
#    "playedSeconds" (video.played), "currentTime", "behindLiveSeconds" (the media time of the live
#    edge, the playlist's end, − currentTime), "behindProgramDateTimeSeconds" (with
#    EXT-X-PROGRAM-DATE-TIME: Date.now() − the program date time of currentTime); --native places
#    the playlist's segments on Chromium's timeline by the last one its player fetched (Resource
#    Timing), which ends at the buffered end, "bufferedAheadSeconds" (--native),
#    "requests": {"playlist", "blocking"}, "discontinuities": {"seen" (appended or fetched),
#    "played" (passed)} (--native: both from Resource Timing and the playlists the page reads),
#    "liveSeeks", "resyncs" (the playlist had moved past the next part), "codecs" (--mse), "ended",
#    "firstFrameMs" (page load to the first presented frame)}
# --frame-numbers: each presented frame (requestVideoFrameCallback) is drawn into a canvas and a frame
# number read from its top 16 rows: 16 blocks across the width, block i white when bit 15 - i of the
# number is 1, black when 0 (so numbers wrap at 65536: 36 min at 30 fps). The report adds "shownAt":
# {frameNumber: Date.now() in the callback of the frame's first showing} (at most 300, evenly
# sampled), "framesRead", "unreadableFrames" (a block neither dark nor light), "frameNumberDecreases". This
# FFmpeg filter draws that code (N the frame number, from 0; chroma grey under the strip), here
# into a live test stream (read back by both modes: every number, one apart, increasing):
#   ffmpeg -re -f lavfi -i testsrc2=size=640x360:rate=30 -f lavfi -i sine=frequency=440:sample_rate=48000
#     -vf "geq=lum='if(lt(Y,16),if(bitand(floor(N/pow(2,15-floor(X*16/W))),1),235,16),lum(X,Y))':cb='if(lt(Y,16*SH),128,cb(X,Y))':cr='if(lt(Y,16*SH),128,cr(X,Y))'"
#     -c:v libx264 -g 60 -c:a aac -f hls -hls_segment_type fmp4 -hls_time 2 -hls_list_size 6
#     -hls_flags delete_segments+program_date_time DIR/index.m3u8
# Exits 0 when the page reported (whatever it reported: the caller judges), 2 on a set-up failure.
# Usage: /usr/bin/python3 Scripts/chromium-hls.py PLAYLIST_URL [--mse | --native] [--seconds S]
#        [--frame-numbers] [--audio-analyser] [--timeout SECONDS]
import argparse
import json
import os
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import headless_chromium

parser = argparse.ArgumentParser()
parser.add_argument("url")
group = parser.add_mutually_exclusive_group()
group.add_argument("--mse", dest="mode", action="store_const", const="mse")
group.add_argument("--native", dest="mode", action="store_const", const="native")
parser.add_argument("--seconds", type=float, default=20)
parser.add_argument("--timeout", type=float, default=30)
parser.add_argument("--frame-numbers", action="store_true")
parser.add_argument("--audio-analyser", action="store_true")
args = parser.parse_args()
mode = args.mode or "mse"
try:
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "hls-harness.html"), "rb") as f:
        PAGE = f.read()
except OSError as error:
    print("chromium-hls: %s" % error, file=sys.stderr)
    sys.exit(2)


class Handler(BaseHTTPRequestHandler):
    """The harness page, whatever the path."""

    def log_message(self, *a):
        pass

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()

driver = headless_chromium.start("chromium-hls")

try:
    driver.set_script_timeout(2 * args.timeout + args.seconds + 10)
    query = urllib.parse.urlencode({"src": args.url, "mode": mode, "frames": int(args.frame_numbers),
                                    "timeout": args.timeout, "analyser": int(args.audio_analyser)})
    driver.get("http://127.0.0.1:%d/hls.html?%s" % (server.server_address[1], query))
    # Wait for the first frame (or an error, or --timeout), then play for --seconds.
    result = driver.execute_async_script("""
        const [seconds, timeout, done] = arguments;
        const began = Date.now();
        const poll = setInterval(() => {
          const r = window.report;
          if (r.error || (r.firstFrameMs === null && Date.now() - began > timeout * 1000)) {
            if (!r.error) r.error = 'no frame within ' + timeout + ' s';
            clearInterval(poll); window.finish().then(done, (e) => done({error: 'report: ' + e}));
          } else if (r.firstFrameMs !== null) {
            clearInterval(poll); setTimeout(() => window.finish().then(done, (e) => done({error: 'report: ' + e})), seconds * 1000);
          }
        }, 100);
    """, args.seconds, args.timeout)
    print(json.dumps(result))
except Exception as error:  # noqa: BLE001 - no report from the page (say, a script timeout): a set-up failure
    print("chromium-hls: the page did not report: %s" % error, file=sys.stderr)
    sys.exit(2)
finally:
    driver.quit()
    server.shutdown()
