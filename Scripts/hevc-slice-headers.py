#!/usr/bin/env python3
"""Writes FFmpeg's reading of every H.265 slice segment header's first elements, up to
slice_pic_order_cnt_lsb (what access-unit cutting and POC need), as JSON.

Usage: hevc-slice-headers.py STREAM.265 OUT.json
Runs `ffmpeg -bsf:v trace_headers` (FFmpeg's cbs names, the oracle of Fixtures/hevc/expected).
"""
import json
import re
import subprocess
import sys

KEPT = re.compile(r"^(forbidden_zero_bit|nal_unit_type|nuh_layer_id|nuh_temporal_id_plus1|first_slice_segment_in_pic_flag|no_output_of_prior_pics_flag|slice_pic_parameter_set_id|"
                  r"dependent_slice_segment_flag|slice_segment_address|slice_reserved_flag\[\d+\]|slice_type|"
                  r"pic_output_flag|colour_plane_id|slice_pic_order_cnt_lsb)$")


def main():
    stream, out = sys.argv[1], sys.argv[2]
    trace = subprocess.run(["ffmpeg", "-nostdin", "-v", "trace", "-nostats", "-i", stream, "-c", "copy", "-bsf:v", "trace_headers",
                            "-f", "null", "-"], capture_output=True, text=True).stderr
    slices, current = [], None
    for line in trace.splitlines():
        if not line.startswith("[trace_headers"):
            continue
        text = line.split("]", 1)[1].strip()
        if text == "Slice Segment Header":
            current = []
            slices.append(current)
            continue
        fields = text.split()
        if current is None or len(fields) < 4 or fields[-2] != "=":
            continue
        name = fields[1]
        if not KEPT.match(name) or (current and current[-1][0] == "slice_pic_order_cnt_lsb"):
            current = None
            continue
        current.append([name, int(fields[-1])])
    with open(out, "w") as f:
        json.dump({"file": stream.split("/")[-1], "slice_segment_headers": slices}, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
