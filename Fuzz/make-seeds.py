#!/usr/bin/env python3
"""Writes the fuzz seed corpora from the test fixtures.

Usage: make-seeds.py OUT_DIR FIXTURE_DIR...

For every Annex-B stream (*.264, *.jsv, *.avc, *.26l, *.h264 …) under the fixture folders it
writes, per target (OUT_DIR/<target>/):
  annexb, assembler, roundtrip, rtp  the stream, cut to its first 8 KiB, ending at a NAL boundary
  rtp                           also the cut stream as RTP packets (RFC 6184: single NAL units and
                                FU-A, marker on each access unit's last), framed as the target reads
                                them: one byte, then a 2-byte length before each packet
  stream, decoder               8 chunk-seed bytes, then the stream as above
  avcc                          the cut stream converted to lengths of 4, 2 and 1 bytes (when they fit)
  avcc-record                   an avcC of the stream's parameter sets, and Annex-B extradata
  sps                           each distinct SPS NAL unit
  pps                           SPS + PPS in Annex-B, per distinct PPS
  slice                         SPS + PPS + the first 64 bytes of the first slices, Annex-B
  y4m                           y4m files cut after two frames (and their headers alone)
  flv-audio, flv                FLV audio tag bodies (AAC, G.711, MP3), alone and as an FLV file
                                (not from the fixtures)
  flv                           an FLV file (legacy and Enhanced RTMP tags): the avcC sequence
                                header, the first slices (cut to 1 KiB) as frames, end of sequence
  mp4                           an MP4 file (`avc1`+avcC, the first slices cut to 1 KiB as samples),
                                progressive (moov after mdat) and fragmented (moov+mvex, moof+mdat)
For every H.265 stream (*.265):
  hevc-ps                       its distinct VPS, SPS and PPS in Annex-B, each alone and all together
  hevc-assembler, hevc-rtp      the stream cut as above
  hevc-rtp                      also the cut stream as RTP packets (RFC 7798: single NAL units and
                                FU, type 49), framed as for rtp
  flv                           an Enhanced RTMP `hvc1` FLV file: an hvcC of its VPS/SPS/PPS, the first
                                slice segments (cut to 1 KiB) as frames (the first CodedFramesX), end
  mp4                           an `hvc1` MP4 file of the same hvcC and slice segments, progressive and
                                fragmented
  decoder                       8 chunk-seed bytes, then the stream cut as above (AnnexBDecoder tells
                                the codec from the NAL headers: libavcodec's HEVC decoder)
The seeds are small, so that each target runs thousands of inputs a second.
"""
import hashlib
import os
import sys

CUT = 8 * 1024


def split_annexb(data):
    """NAL units as (start code offset, bytes), trailing zeros trimmed, empty units dropped."""
    units = []
    i = data.find(b"\x00\x00\x01")
    while i != -1:
        start = i + 3
        nxt = data.find(b"\x00\x00\x01", start)
        end = nxt if nxt != -1 else len(data)
        unit = data[start:end].rstrip(b"\x00")
        if unit:
            units.append(unit)
        i = nxt
    return units


def annexb(units):
    return b"".join(b"\x00\x00\x00\x01" + u for u in units)


def write(out, target, payload):
    folder = os.path.join(out, target)
    os.makedirs(folder, exist_ok=True)
    name = hashlib.sha1(payload).hexdigest()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(payload)


def avcc(units, size):
    out = b""
    for u in units:
        if len(u) >= 1 << (8 * size):
            return None
        out += len(u).to_bytes(size, "big") + u
    return out


def avcc_record(sps, pps):
    s = sps[0]
    if len(s) < 4:
        return None
    rec = bytes([1, s[1], s[2], s[3], 0xFF, 0xE0 | len(sps)])
    for u in sps:
        rec += len(u).to_bytes(2, "big") + u
    rec += bytes([len(pps)])
    for u in pps:
        rec += len(u).to_bytes(2, "big") + u
    if s[1] not in (66, 77, 88):
        rec += bytes([0xFD, 0xF8, 0xF8, 0])
    return rec


def box(kind, payload):
    return (8 + len(payload)).to_bytes(4, "big") + kind + payload


def full_box(kind, payload, version=0, flags=0):
    return box(kind, bytes([version]) + flags.to_bytes(3, "big") + payload)


def mp4_file(rec, slices, fragmented, fourcc=b"avc1"):
    """A one-track MP4 (ISO/IEC 14496-12) of the configuration record and the slices, each a
    4-byte-length sample, 25 fps at timescale 12800, the first a sync sample: progressive
    (ftyp, mdat, moov) or fragmented (ftyp, moov with mvex/trex, moof with tfhd
    default-base-is-moof, tfdt and trun, mdat)."""
    u32 = lambda v: v.to_bytes(4, "big")
    samples = [len(s).to_bytes(4, "big") + s for s in slices]
    ftyp = box(b"ftyp", b"isom" + u32(512) + b"isomiso6")
    entry = box(fourcc, bytes(6) + (1).to_bytes(2, "big") + bytes(16) + (64).to_bytes(2, "big") + (64).to_bytes(2, "big")
                + u32(0x480000) * 2 + u32(0) + (1).to_bytes(2, "big") + bytes(32) + (24).to_bytes(2, "big") + b"\xff\xff"
                + box(b"avcC" if fourcc in (b"avc1", b"avc3") else b"hvcC", rec))

    def moov(chunk_offset):
        n = 0 if fragmented else len(samples)
        tables = full_box(b"stsd", u32(1) + entry) + full_box(b"stts", u32(1) + u32(n) + u32(512) if n else u32(0))
        tables += full_box(b"stss", u32(1) + u32(1)) if n else b""
        tables += full_box(b"stsc", u32(1) + u32(1) + u32(n) + u32(1) if n else u32(0))
        tables += full_box(b"stsz", u32(0) + u32(n) + b"".join(u32(len(s)) for s in samples[:n]))
        tables += full_box(b"stco", u32(1) + u32(chunk_offset) if n else u32(0))
        mdia = full_box(b"mdhd", u32(0) * 2 + u32(12800) + u32(512 * n) + u32(0)) + full_box(b"hdlr", u32(0) + b"vide" + bytes(13))
        mdia += box(b"minf", box(b"stbl", tables))
        trak = box(b"trak", full_box(b"tkhd", u32(0) * 2 + u32(1) + bytes(72), flags=3) + box(b"mdia", mdia))
        mvex = box(b"mvex", full_box(b"trex", u32(1) + u32(1) + u32(512) + u32(0) + u32(0x10000))) if fragmented else b""
        return box(b"moov", full_box(b"mvhd", u32(0) * 2 + u32(1000) + u32(0) + bytes(80)) + trak + mvex)

    media = b"".join(samples)
    if not fragmented:
        return ftyp + box(b"mdat", media) + moov(len(ftyp) + 8)
    runs = b"".join(u32(len(s)) + u32(0x2000000 if i == 0 else 0x1010000) for i, s in enumerate(samples))
    def moof(data_offset):
        trun = full_box(b"trun", u32(len(samples)) + data_offset.to_bytes(4, "big", signed=True) + runs, flags=0x601)
        traf = box(b"traf", full_box(b"tfhd", u32(1), flags=0x20000) + full_box(b"tfdt", (0).to_bytes(8, "big"), version=1) + trun)
        return box(b"moof", full_box(b"mfhd", u32(1)) + traf)
    return ftyp + moov(0) + moof(len(moof(0)) + 8) + box(b"mdat", media)


def rtp_packets(units, header_size, is_first_slice_of_picture, mtu=600):
    """The NAL units as RTP packets the way a camera sends them: a unit that fits goes alone, a
    larger one in fragments (FU-A for H.264, header_size 1; FU type 49 for H.265, header_size 2),
    the timestamp advancing and the marker set at each access unit's end (a unit that starts a
    picture ends the one before). Framed for the rtp targets: a reorder byte of 0, then each
    packet after its 2-byte length."""
    payloads = []
    for u in units:
        if len(u) <= mtu:
            payloads.append((u, is_first_slice_of_picture(u)))
            continue
        head, body = u[:header_size], u[header_size:]
        if header_size == 1:
            indicator, kind = bytes([head[0] & 0xE0 | 28]), head[0] & 0x1F
        else:
            indicator, kind = bytes([head[0] & 0x81 | 49 << 1, head[1]]), head[0] >> 1 & 0x3F
        step = mtu - header_size - 1
        for offset in range(0, len(body), step):
            fu = kind | (0x80 if offset == 0 else 0) | (0x40 if offset + step >= len(body) else 0)
            payloads.append((indicator + bytes([fu]) + body[offset:offset + step], offset == 0 and is_first_slice_of_picture(u)))
    out, timestamp = bytearray([0]), 0
    for i, (payload, starts_picture) in enumerate(payloads):
        if starts_picture and i > 0:
            timestamp += 3000
        ends = i + 1 == len(payloads) or payloads[i + 1][1]
        header = bytes([0x80, (0x80 if ends else 0) | 96]) + (1000 + i & 0xFFFF).to_bytes(2, "big")
        packet = header + (timestamp & 0xFFFFFFFF).to_bytes(4, "big") + b"\x12\x34\x56\x78" + payload
        out += len(packet).to_bytes(2, "big") + packet
    return bytes(out)


def flv_tag(ts, data, tag_type=9):
    return (bytes([tag_type]) + len(data).to_bytes(3, "big") + (ts & 0xFFFFFF).to_bytes(3, "big")
            + bytes([ts >> 24 & 0xFF, 0, 0, 0]) + data + (11 + len(data)).to_bytes(4, "big"))


def flv(rec, slices, enhanced, fourcc=b"avc1", is_key=lambda s: s[0] & 0x1F == 5):
    """An FLV file of `rec` and `slices` (4-byte lengths); H.265 (`hvc1`) is enhanced only, its
    first frame a CodedFramesX (no composition time)."""
    out = b"FLV\x01\x01\x00\x00\x00\x09\x00\x00\x00\x00"
    out += flv_tag(0, (b"\x90" + fourcc if enhanced else b"\x17\x00\x00\x00\x00") + rec)
    for i, s in enumerate(slices):
        frame = 1 if is_key(s) else 2
        nal = len(s).to_bytes(4, "big") + s
        cts = (40 if i % 2 else -40) & 0xFFFFFF
        if enhanced and fourcc == b"hvc1" and i == 0:
            out += flv_tag(0, bytes([0x80 | frame << 4 | 3]) + fourcc + nal)
        elif enhanced:
            out += flv_tag(i * 40, bytes([0x80 | frame << 4 | 1]) + fourcc + cts.to_bytes(3, "big") + nal)
        else:
            out += flv_tag(i * 40, bytes([frame << 4 | 7, 1]) + cts.to_bytes(3, "big") + nal)
    out += flv_tag(len(slices) * 40, b"\x92" + fourcc if enhanced else b"\x17\x02\x00\x00\x00")
    return out


# FLV audio tag bodies (annex E.4.2.1): an AAC sequence header (44.1 kHz stereo), raw AAC frames
# of silence (mono, stereo), G.711 A-law and mu-law samples, and an MP3 tag (unsupported).
AUDIO_BODIES = [b"\xaf\x00\x12\x10", b"\xaf\x01\x00\xc8\x00\x07", b"\xaf\x01\x20\x64\x00\x01\x90\x00\x0e",
                b"\x72\xd5\xd5\x55\x55", b"\x82\xff\xff\x7f\x7f", b"\x2f\xff\xfb"]


def flv_audio_seeds(out):
    """flv-audio: each body alone, and all of them with a length byte before each; flv: an audio-only
    FLV file of the same bodies."""
    for body in AUDIO_BODIES:
        write(out, "flv-audio", body)
    write(out, "flv-audio", b"".join(bytes([len(b)]) + b for b in AUDIO_BODIES))
    out_flv = b"FLV\x01\x04\x00\x00\x00\x09\x00\x00\x00\x00"
    for i, body in enumerate(AUDIO_BODIES):
        out_flv += flv_tag(i * 23, body, 8)
    write(out, "flv", out_flv)


def hvcc_record(vps, sps, pps):
    """An hvcC of the parameter sets: a plausible fixed part (Main, level 3.1, 4:2:0 8-bit,
    4-byte lengths), then one array per type."""
    rec = bytes([1, 0x01, 0x60, 0, 0, 0, 0x90, 0, 0, 0, 0, 0, 93, 0xF0, 0x00, 0xFC, 0xFD, 0xF8, 0xF8, 0, 0, 0x0F, 3])
    for nal_type, units in ((32, vps), (33, sps), (34, pps)):
        rec += bytes([0x80 | nal_type]) + len(units).to_bytes(2, "big")
        for u in units:
            rec += len(u).to_bytes(2, "big") + u
    return rec


def first_units(units):
    """The first NAL units, as many as fit CUT bytes in Annex-B (at least one)."""
    cut, size = [], 0
    for u in units:
        if size + len(u) + 4 > CUT and cut:
            break
        cut.append(u)
        size += len(u) + 4
    return cut


def stream_seeds(out, data):
    units = split_annexb(data)
    if not units:
        return
    cut = first_units(units)
    body = annexb(cut)
    for target in ("annexb", "assembler", "roundtrip", "rtp"):
        write(out, target, body)
    # A VCL unit whose first_mb_in_slice is 0 (ue(v) "1": the top bit of its second byte) starts a picture.
    write(out, "rtp", rtp_packets(cut, 1, lambda u: u[0] & 0x1F in (1, 5) and len(u) > 1 and u[1] & 0x80 != 0))
    write(out, "stream", hashlib.sha1(body).digest()[:8] + body)
    write(out, "decoder", hashlib.sha1(body).digest()[:8] + body)
    for n in (4, 2, 1):
        a = avcc(cut, n)
        if a is not None:
            write(out, "avcc", a)
    sps = list(dict.fromkeys(u for u in units if u[0] & 0x1F == 7))
    pps = list(dict.fromkeys(u for u in units if u[0] & 0x1F == 8))
    slices = [u for u in units if u[0] & 0x1F in (1, 5)][:3]
    for u in sps:
        write(out, "sps", u)
    for p in pps:
        write(out, "pps", annexb(sps + [p]))
    if sps and pps:
        write(out, "slice", annexb(sps + pps + [s[:64] for s in slices]))
        rec = avcc_record(sps[:31], pps[:255])
        if rec:
            write(out, "avcc-record", rec)
            for enhanced in (False, True):
                write(out, "flv", flv(rec, [s[:1024] for s in slices], enhanced))
            if slices:
                for fragmented in (False, True):
                    write(out, "mp4", mp4_file(rec, [s[:1024] for s in slices], fragmented))
        write(out, "avcc-record", annexb(sps + pps))


def hevc_seeds(out, data):
    units = split_annexb(data)
    sets = list(dict.fromkeys(u for u in units if len(u) > 2 and 32 <= (u[0] >> 1) & 0x3F <= 34))
    for u in sets:
        write(out, "hevc-ps", annexb([u]))
    if sets:
        write(out, "hevc-ps", annexb(sets))
    write(out, "hevc-assembler", annexb(first_units(units)))
    write(out, "hevc-rtp", annexb(first_units(units)))
    # A VCL unit (types 0-31) with first_slice_segment_in_pic_flag (the top bit of its third byte).
    write(out, "hevc-rtp", rtp_packets(first_units(units), 2, lambda u: (u[0] >> 1 & 0x3F) < 32 and len(u) > 2 and u[2] & 0x80 != 0))
    body = annexb(first_units(units))
    write(out, "decoder", hashlib.sha1(body).digest()[:8] + body)
    of_type = lambda t: list(dict.fromkeys(u for u in units if len(u) > 2 and (u[0] >> 1) & 0x3F == t))
    slices = [u for u in units if len(u) > 2 and (u[0] >> 1) & 0x3F < 32][:3]
    if of_type(33) and slices:
        rec = hvcc_record(of_type(32)[:4], of_type(33)[:4], of_type(34)[:4])
        write(out, "flv", flv(rec, [s[:1024] for s in slices], True, b"hvc1", lambda s: 16 <= (s[0] >> 1) & 0x3F <= 23))
        for fragmented in (False, True):
            write(out, "mp4", mp4_file(rec, [s[:1024] for s in slices], fragmented, b"hvc1"))


def y4m_seeds(out, data):
    header_end = data.find(b"\n")
    if header_end == -1:
        return
    write(out, "y4m", data[: header_end + 1])
    frames, position = 0, header_end + 1
    header = data[:header_end].split()
    w = next(int(f[1:]) for f in header if f.startswith(b"W"))
    h = next(int(f[1:]) for f in header if f.startswith(b"H"))
    frame = w * h * 3 // 2
    while frames < 2 and position < len(data):
        line_end = data.find(b"\n", position)
        position = line_end + 1 + frame
        frames += 1
    write(out, "y4m", data[:position])


def audio_seeds(out, name, data):
    """Fixtures/audio: RTP captures (2-byte length prefixes already) for audio-rtp, behind the
    byte that picks the payload format (0 mpeg4-generic, 3 LATM; AudioTargets.swift) and an MTU
    byte; SDPs for sdp-audio and sdp; AAC configurations for audio-config."""
    if name.endswith(".rtp"):
        body = data[:4096]
        pick = 3 if "latm" in name else 0
        write(out, "audio-rtp", bytes([pick, 20]) + body)
        write(out, "audio-rtp", bytes([5, 100]) + body)  # the same packets as G.711
    elif name.endswith(".sdp"):
        write(out, "sdp-audio", data)
        write(out, "sdp", data + b"m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\n")
    elif name.endswith(".aac"):
        write(out, "audio-config", bytes.fromhex("119056E500"))
        write(out, "audio-config", bytes.fromhex("400023203fc0"))
        write(out, "audio-config", bytes.fromhex("1408"))
        write(out, "audio-config", bytes.fromhex("0140002320") + data[7:64])


def main():
    out = sys.argv[1]
    flv_audio_seeds(out)
    for root in sys.argv[2:]:
        for folder, _, files in os.walk(root):
            for name in sorted(files):
                path = os.path.join(folder, name)
                if name.endswith(".json") or name in ("PROVENANCE", "PROVENANCE.tsv") or name.endswith(".md"):
                    continue
                with open(path, "rb") as f:
                    data = f.read(4 << 20)
                if name.endswith(".y4m"):
                    y4m_seeds(out, data)
                elif name.endswith((".yuv", ".mkv")):
                    continue
                elif folder.split(os.sep)[-1] == "audio":
                    audio_seeds(out, name, data)
                elif name.endswith(".265"):
                    hevc_seeds(out, data)
                elif "avcc" in folder.split(os.sep)[-1]:
                    write(out, "avcc", data[:CUT])
                else:
                    stream_seeds(out, data)


if __name__ == "__main__":
    main()
