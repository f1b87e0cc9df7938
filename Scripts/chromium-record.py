#!/usr/bin/python3
# Records a canvas animation (and, with --audio, a WebAudio tone) with headless Chromium's
# MediaRecorder (Debian's chromium + chromium-driver, through python3-selenium), as a web page
# that records the user's camera does, and writes what MediaRecorder gives to FILE.
# MediaRecorder with 'video/mp4;codecs=avc1' (…,opus with --audio: Chromium records no AAC here)
# writes a fragmented MP4:
# an init segment, then a moof + mdat per timeslice.
# Exits 0 when the file was written, 2 on a set-up failure or when Chromium cannot record MP4.
# Usage: /usr/bin/python3 Scripts/chromium-record.py FILE [--seconds S] [--audio] [--timeslice MS]
import argparse
import base64
import sys
import headless_chromium

parser = argparse.ArgumentParser()
parser.add_argument("file")
parser.add_argument("--seconds", type=float, default=2)
parser.add_argument("--timeslice", type=int, default=500)
parser.add_argument("--audio", action="store_true")
args = parser.parse_args()

driver = headless_chromium.start("chromium-record")

try:
    driver.set_script_timeout(args.seconds + 30)
    driver.get("data:text/html,<canvas id=c width=320 height=240></canvas>")
    result = driver.execute_async_script("""
        const [seconds, timeslice, audio, done] = arguments;
        const type = audio ? 'video/mp4;codecs=avc1,opus' : 'video/mp4;codecs=avc1';
        if (!MediaRecorder.isTypeSupported(type)) { done({error: 'MediaRecorder cannot record ' + type}); return; }
        const canvas = document.getElementById('c'), g = canvas.getContext('2d');
        let frame = 0;
        const draw = () => {
          g.fillStyle = 'hsl(' + (frame * 7 % 360) + ',80%,50%)'; g.fillRect(0, 0, 320, 240);
          g.fillStyle = 'white'; g.fillRect((frame * 5) % 300, 100, 20, 40);
          g.font = '30px sans-serif'; g.fillText(String(frame), 10, 40); frame += 1;
        };
        draw();
        const timer = setInterval(draw, 1000 / 30);
        const stream = canvas.captureStream(30);
        if (audio) {
          const context = new AudioContext(), tone = context.createOscillator(), sink = context.createMediaStreamDestination();
          tone.connect(sink); tone.start();
          sink.stream.getAudioTracks().forEach(t => stream.addTrack(t));
        }
        const recorder = new MediaRecorder(stream, {mimeType: type, videoBitsPerSecond: 500000});
        const parts = [];
        recorder.ondataavailable = e => { if (e.data.size > 0) parts.push(e.data); };
        recorder.onerror = e => done({error: 'MediaRecorder: ' + e.error});
        recorder.onstop = async () => {
          clearInterval(timer);
          const bytes = new Uint8Array(await new Blob(parts, {type: type}).arrayBuffer());
          let text = '';
          for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
          done({data: btoa(text), type: recorder.mimeType});
        };
        recorder.start(timeslice);
        setTimeout(() => recorder.stop(), seconds * 1000);
    """, args.seconds, args.timeslice, args.audio)
    if result.get("error"):
        print("chromium-record: %s" % result["error"], file=sys.stderr)
        sys.exit(2)
    with open(args.file, "wb") as f:
        f.write(base64.b64decode(result["data"]))
    print(result["type"])
finally:
    driver.quit()
