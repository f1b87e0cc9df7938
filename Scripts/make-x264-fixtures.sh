#!/usr/bin/env bash
# Regenerates Fixtures/x264/: tiny x264-made streams exercising SPS/PPS syntax the conformance
# streams lack (VUI, HRD, Extended_SAR, 4:2:2 10-bit, 4:4:4, interlaced, scaling lists, level 1b),
# each with NAME.json beside it: FFmpeg's reading of the stream (trace_headers element lists of
# every distinct SPS/PPS in order of first appearance, and a few ffprobe fields).
#
# Needs x264 (built with 8- and 10-bit support), ffmpeg/ffprobe and python3. YUV input comes
# from the committed clips in Fixtures/yuv. It prints the PROVENANCE lines of what it wrote.
# Usage: Scripts/make-x264-fixtures.sh   (from anywhere)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
yuv="$root/Fixtures/yuv"
out="$root/Fixtures/x264"
mkdir -p "$out"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# A custom quantisation matrix file (x264 --cqmfile format): constant lists whose trailing
# repeats x264 codes with the early stop of scaling_list() (nextScale 0), a ramp for the 8x8
# intra list, and no chroma lists (x264 then uses flat 16 for Cb and Cr, coding Cr as "not present"
# so that fall-back rule A applies).
cat > "$tmp/custom.cqm" <<'CQM'
INTRA4X4_LUMA =
20,20,20,20,
20,20,20,20,
20,20,20,20,
20,20,20,20
INTER4X4_LUMA =
18,18,18,18,
18,18,18,18,
18,18,18,18,
18,18,18,18
INTRA8X8_LUMA =
8,9,10,11,12,13,14,15,
9,10,11,12,13,14,15,16,
10,11,12,13,14,15,16,17,
11,12,13,14,15,16,17,18,
12,13,14,15,16,17,18,19,
13,14,15,16,17,18,19,20,
14,15,16,17,18,19,20,21,
15,16,17,18,19,20,21,22
INTER8X8_LUMA =
24,24,24,24,24,24,24,24,
24,24,24,24,24,24,24,24,
24,24,24,24,24,24,24,24,
24,24,24,24,24,24,24,24,
24,24,24,24,24,24,24,24,
24,24,24,24,24,24,24,24,
24,24,24,24,24,24,24,24,
24,24,24,24,24,24,24,24
CQM

# name | input yuv | resolution | x264 options
streams=(
  "vui_hrd_high_160x96|CiscoVT2people_160x96_6fps.yuv|160x96|--frames 2 --fps 30000/1001 --sar 4:3 --nal-hrd vbr --vbv-bufsize 1000 --vbv-maxrate 800 --bitrate 500 --colorprim bt709 --transfer bt709 --colormatrix bt709 --range pc --chromaloc 1 --overscan show --videoformat pal"
  "high422_10bit_tff_80x44|vvenc_RTn23_80x44_15f.yuv|80x44|--frames 2 --fps 25 --output-csp i422 --profile high422 --output-depth 10 --tff --sar 7:5 --nal-hrd cbr --vbv-bufsize 300 --vbv-maxrate 300 --bitrate 300"
  "high444_cqmjvt_80x44|vvenc_RTn23_80x44_15f.yuv|80x44|--frames 2 --fps 24000/1001 --output-csp i444 --profile high444 --cqm jvt"
  "high_cqmfile_80x44|vvenc_RTn23_80x44_15f.yuv|80x44|--frames 2 --fps 50 --profile high --8x8dct --cqmfile $tmp/custom.cqm"
  "baseline_level1b_80x44|vvenc_RTn23_80x44_15f.yuv|80x44|--frames 3 --fps 15 --profile baseline --level 1b"
)

# describe NAME GENERATED_BY: writes NAME.json — FFmpeg's trace_headers element lists of every
# distinct SPS/PPS in order of first appearance, and ffprobe's stream fields.
describe() {
  local name="$1" generated_by="$2"
  ffmpeg -nostdin -hide_banner -f h264 -i "$out/$name.264" -c copy -bsf:v trace_headers -f null - >"$tmp/trace.txt" 2>&1 || true
  ffprobe -v error -select_streams v -show_streams -of json "$out/$name.264" </dev/null >"$tmp/probe.json" 2>/dev/null \
    || echo '{"streams":[{}]}' >"$tmp/probe.json"
  python3 - "$tmp/trace.txt" "$tmp/probe.json" "$out/$name.json" "$name.264" "$generated_by" <<'PY'
import json, re, sys
trace, probe, dest, file, command = sys.argv[1:]
element = re.compile(r'^\[trace_headers @ \S+\] \d+\s+(\S+)\s+[01]+ = (-?\d+)\s*$')
header = re.compile(r'^\[trace_headers @ \S+\] (.*)$')
lists = {"sps": [], "pps": []}
current = None
for line in open(trace, encoding="utf-8", errors="replace"):
    line = line.rstrip("\n")
    m = element.match(line)
    if m and current is not None:
        current.append([m.group(1), int(m.group(2))])
        continue
    if current is not None and current not in lists[kind]:
        lists[kind].append(current)
    current = None
    h = header.match(line)
    if h and h.group(1).strip() in ("Sequence Parameter Set", "Picture Parameter Set"):
        kind = "sps" if h.group(1).startswith("Sequence") else "pps"
        current = []
if current is not None and current not in lists[kind]:
    lists[kind].append(current)
stream = (json.load(open(probe)).get("streams") or [{}])[0]
keys = ["profile", "level", "width", "height", "coded_width", "coded_height", "pix_fmt",
        "field_order", "r_frame_rate", "sample_aspect_ratio", "color_range", "color_primaries"]
result = {"file": file, "generated_by": command,
          "ffprobe": {k: stream[k] for k in keys if k in stream},
          "sps": lists["sps"], "pps": lists["pps"]}
with open(dest, "w") as f:
    json.dump(result, f, indent=None, separators=(",", ":"))
    f.write("\n")
PY
}

for entry in "${streams[@]}"; do
  IFS='|' read -r name input res opts <<<"$entry"
  # shellcheck disable=SC2086
  x264 --quiet --threads 1 --input-res "$res" $opts -o "$out/$name.264" "$yuv/$input" 2>/dev/null
  shown_opts="${opts//$tmp\//}"
  describe "$name" "x264 --input-res $res $shown_opts ($input)"
  echo "x264/$name.264	generated by Scripts/make-x264-fixtures.sh: x264 $(x264 --version 2>/dev/null | head -1 | cut -d' ' -f2) --input-res $res $shown_opts, input $input from Fixtures/yuv	derived from the Fixtures/yuv clips (see their lines)	"
  echo "x264/$name.json	FFmpeg's reading of x264/$name.264 (ffmpeg $(ffmpeg -version | head -1 | cut -d' ' -f3) trace_headers + ffprobe), written by Scripts/make-x264-fixtures.sh	same as the stream	"
done

# Slice groups (FMO): x264 never writes them, so PPSs with each slice_group_map_type are assembled
# here (clause 7.3.2.2) and put after the SPS of the Baseline stream above; the IDR slice is kept so
# that FFmpeg reads the file (it then fails on the slice, which is expected: the PPSs are the point).
python3 - "$out/baseline_level1b_80x44.264" "$out/baseline_slicegroups_80x44.264" <<'PY'
import sys
src, dst = sys.argv[1], sys.argv[2]
parts = [p.rstrip(b"\x00") for p in open(src, "rb").read().split(b"\x00\x00\x01")]
parts = [p for p in parts if p]
sps = next(p for p in parts if p[0] & 0x1F == 7)
idr = next(p for p in parts if p[0] & 0x1F == 5)
class W:
    def __init__(s): s.b = []
    def u(s, n, v): s.b += [(v >> i) & 1 for i in range(n - 1, -1, -1)]
    def ue(s, v):
        c = v + 1; n = c.bit_length(); s.u(n - 1, 0); s.u(n, c)
    def se(s, v): s.ue(2 * v - 1 if v > 0 else -2 * v)
    def nal(s):
        b = s.b + [1]
        while len(b) % 8: b.append(0)
        raw = bytes(int("".join(map(str, b[i:i + 8])), 2) for i in range(0, len(b), 8))
        out = bytearray(); z = 0
        for x in raw:
            if z >= 2 and x <= 3: out.append(3); z = 0
            out.append(x); z = z + 1 if x == 0 else 0
        return bytes(out)
def pps(pid, groups, maptype, body):
    w = W(); w.u(8, 0x68); w.ue(pid); w.ue(0); w.u(1, 0); w.u(1, 0); w.ue(groups - 1)
    w.ue(maptype); body(w)
    w.ue(0); w.ue(0); w.u(1, 0); w.u(2, 0); w.se(0); w.se(0); w.se(0); w.u(1, 1); w.u(1, 0); w.u(1, 0)
    return w.nal()
# 80x48 coded: 5 x 3 = 15 map units
units = [
    pps(1, 3, 0, lambda w: [w.ue(4), w.ue(2), w.ue(7)]),                      # run_length_minus1
    pps(2, 3, 2, lambda w: [w.ue(0), w.ue(6), w.ue(5), w.ue(14)]),            # top_left, bottom_right
    pps(3, 2, 4, lambda w: [w.u(1, 1), w.ue(3)]),                             # change direction, rate
    pps(4, 5, 6, lambda w: [w.ue(14)] + [w.u(3, i % 5) for i in range(15)]),  # slice_group_id, 3 bits
    pps(5, 2, 1, lambda w: None),                                             # dispersed: nothing more
]
open(dst, "wb").write(b"".join(b"\x00\x00\x00\x01" + u for u in [sps] + units + [idr]))
PY
describe baseline_slicegroups_80x44 "SPS and IDR slice of baseline_level1b_80x44.264 with five hand-assembled slice-group PPSs (map types 0, 2, 4, 6, 1)"
echo "x264/baseline_slicegroups_80x44.264	generated by Scripts/make-x264-fixtures.sh: the SPS and IDR slice of x264/baseline_level1b_80x44.264 with five hand-assembled PPSs using slice groups (map types 0, 2, 4, 6, 1; clause 7.3.2.2)"
echo "x264/baseline_slicegroups_80x44.json	FFmpeg's reading of x264/baseline_slicegroups_80x44.264 (ffmpeg trace_headers; the slice itself does not decode), written by Scripts/make-x264-fixtures.sh	same as the stream	"
