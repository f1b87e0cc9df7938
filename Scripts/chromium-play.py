#!/usr/bin/python3
# Plays a media file (or an HLS playlist, .m3u8) in headless Chromium (Debian's chromium + chromium-driver, through
# python3-selenium) as a page of the same origin would: `<video src=FILE>` served by a small HTTP
# server on 127.0.0.1 that answers byte ranges, as every web server a browser seeks through does.
# With --mse the page instead fetches the file and appends it to a Media Source Extensions
# SourceBuffer (`video/mp4; codecs="avc1.PPCCLL"`, the profile and level read from the file's
# avcC), as HLS players and every web player of fragmented MP4 do.
# Plays it from start to end at normal speed, then seeks to --seek SECONDS, and prints one JSON
# object on standard output:
#   {"duration": s, "ended": bool, "currentTimeAtEnd": s, "decodedFrames": n, "droppedFrames": n,
#    "error": null or "code: message", "seekedTo": s or null, "stalls": n, "stalledAt": [s…]}
# Exits 0 when the page reported (whatever it reported: the caller judges), 2 on a set-up failure.
# Usage: /usr/bin/python3 Scripts/chromium-play.py FILE [--mse] [--seek SECONDS] [--timeout SECONDS]
import argparse
import json
import os
import re
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
import headless_chromium

parser = argparse.ArgumentParser()
parser.add_argument("file")
parser.add_argument("--seek", type=float)
parser.add_argument("--timeout", type=float, default=60)
parser.add_argument("--mse", action="store_true")
args = parser.parse_args()
directory, name = os.path.split(os.path.abspath(args.file))
codecs = ""
if args.mse:
    with open(args.file, "rb") as f:
        data = f.read(1 << 20)
    at = data.find(b"avcC")
    if at < 0:
        print("chromium-play: --mse needs an avc1 track (no avcC in the file's first MiB)", file=sys.stderr)
        sys.exit(2)
    codecs = "avc1.%02x%02x%02x" % (data[at + 5], data[at + 6], data[at + 7])

PAGE = b"""<!doctype html><html><body>
<video id="v" muted playsinline preload="auto"></video>
<script>
const v = document.getElementById('v');
window.report = {stalls: 0, stalledAt: [], error: null};
// A stall: playback waiting for data after it started and before its end (the end of an MSE
// stream fires 'waiting' at the buffered end before 'ended').
v.addEventListener('waiting', () => {
  if (v.currentTime > 0 && !(v.currentTime >= v.duration - 0.1)) { window.report.stalls += 1; window.report.stalledAt.push(v.currentTime); }
});
v.addEventListener('error', () => { window.report.error = v.error ? v.error.code + ': ' + v.error.message : 'error'; });
const [file, codecs] = location.hash.slice(1).split('|');
if (!codecs) {
  v.src = file;
} else {
  // The whole file into one SourceBuffer, then the end of the stream: its duration is the buffered end.
  const source = new MediaSource();
  v.src = URL.createObjectURL(source);
  source.addEventListener('sourceopen', async () => {
    try {
      const buffer = source.addSourceBuffer('video/mp4; codecs="' + codecs + '"');
      const bytes = await (await fetch(file)).arrayBuffer();
      buffer.addEventListener('updateend', () => source.endOfStream(), {once: true});
      buffer.appendBuffer(bytes);
    } catch (e) { window.report.error = 'MSE: ' + e; }
  }, {once: true});
}
</script></body></html>"""


class Handler(SimpleHTTPRequestHandler):
    """Files of the media's folder with byte ranges (206), and the page at /play.html."""

    def __init__(self, *a, **k):
        super().__init__(*a, directory=directory, **k)

    def log_message(self, *a):
        pass

    def do_GET(self):
        if self.path.startswith("/play.html"):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)
            return
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            self.send_error(404)
            return
        size = os.path.getsize(path)
        start, end = 0, size - 1
        ranged = re.match(r"bytes=(\d*)-(\d*)$", self.headers.get("Range", ""))
        if ranged and (ranged.group(1) or ranged.group(2)):
            if ranged.group(1):
                start = int(ranged.group(1))
                end = min(int(ranged.group(2)), size - 1) if ranged.group(2) else size - 1
            else:
                start = max(0, size - int(ranged.group(2)))
            if start > end:
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % size)
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, size))
        else:
            self.send_response(200)
        # An HLS playlist (.m3u8) is played natively by Chromium from a page of the same origin;
        # its segments (.m4s) are fragmented MP4.
        types = {".m3u8": "application/vnd.apple.mpegurl", ".m4s": "video/mp4"}
        kind = "video/mp4" if path.endswith((".mp4", ".m4v", ".mov")) else types.get(os.path.splitext(path)[1], self.guess_type(path))
        self.send_header("Content-Type", kind)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        with open(path, "rb") as f:
            f.seek(start)
            left = end - start + 1
            try:
                while left > 0:
                    chunk = f.read(min(left, 1 << 16))
                    if not chunk:
                        break
                    self.wfile.write(chunk)
                    left -= len(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()

driver = headless_chromium.start("chromium-play")

try:
    driver.set_script_timeout(args.timeout)
    driver.get("http://127.0.0.1:%d/play.html#%s" % (server.server_address[1], name + ("|" + codecs if codecs else "")))
    # Play to the end (or an error, or the time limit), then seek.
    result = driver.execute_async_script("""
        const [seek, limit, done] = arguments;
        const v = document.getElementById('v');
        const finish = (ended) => {
          const q = v.getVideoPlaybackQuality();
          const out = Object.assign({}, window.report, {duration: v.duration, ended: ended,
            currentTimeAtEnd: v.currentTime, decodedFrames: q.totalVideoFrames, droppedFrames: q.droppedVideoFrames,
            seekedTo: null});
          if (seek === null || window.report.error) { done(out); return; }
          v.addEventListener('seeked', () => { out.seekedTo = v.currentTime; done(out); }, {once: true});
          v.currentTime = seek;
        };
        const timer = setTimeout(() => finish(false), limit * 1000 - 5000);
        v.addEventListener('ended', () => { clearTimeout(timer); finish(true); }, {once: true});
        v.addEventListener('error', () => { clearTimeout(timer); finish(false); }, {once: true});
        v.play().catch(e => { window.report.error = 'play(): ' + e; clearTimeout(timer); finish(false); });
    """, args.seek, args.timeout)
    print(json.dumps(result))
finally:
    driver.quit()
    server.shutdown()
