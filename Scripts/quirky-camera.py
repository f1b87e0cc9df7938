#!/usr/bin/python3
# A test camera with the quirks real cameras have (issue 21): an RTSP server on 127.0.0.1 that
# serves an Annex-B file, from its first access unit at each PLAY and looping, as RTP (RFC 6184,
# packetized here, independently of the library) over UDP or TCP interleaved. Each --quirk
# switches one misbehaviour on; --quirk all switches on every one that can go together.
# Prints one line, `quirky-camera: serving rtsp://127.0.0.1:PORT/stream`, on standard output once
# it listens, then serves until killed. Python's standard library only.
# Usage: /usr/bin/python3 Scripts/quirky-camera.py FILE.264 [--port 0] [--fps 30] [--rate 120] [--quirk NAME]...
#   --fps: the RTP timestamps' frame rate; --rate: access units sent per second of wall clock.
import argparse
import base64
import re
import socket
import socketserver
import struct
import sys
import threading
import time

QUIRKS = {
    # SDP
    "plid-base64": "profile-level-id in base64 (scottlamb/retina#68)",
    "rtpmap-space": "a space after the clock rate of a=rtpmap (gortsplib's SDP tests)",
    "bad-sprop": "sprop-parameter-sets that are no parameter sets (retina#42, VStarcam)",
    "no-sprop": "no sprop-parameter-sets: the parameter sets come in band only",
    "no-origin": "no o= line (AlexxIT/go2rtc#679)",
    "empty-fmtp": "an empty a=fmtp:96, so packetization-mode 0: single NAL unit packets only",
    "content-base-no-scheme": "Content-Base HOST:PORT/PATH/ (scottlamb/moonfire-nvr#356, Anjvision)",
    "content-base-path": "Content-Base /PATH/ (bluenviron/gortsplib#636, Hanwha)",
    "control-absolute": "absolute session- and media-level a=control URLs (retina#33, GeoVision)",
    "control-star": "a=control:* at session and media level (retina#68; RFC 2326 C.1.1)",
    # RTSP
    "no-cseq": "answers without CSeq (gortsplib#410; Parrot Anafi, Parrot-Developers/librtsp#2)",
    "crlf-before-reply": "a stray CRLF before every answer",
    "junk-before-reply": "garbage bytes between interleaved frames and before answers (gortsplib#653, Canon VB-H47)",
    "rtp-before-play-reply": "the first access unit's packets before the PLAY answer (membrane_rtsp#54, Reolink)",
    "server-requests": "GET_PARAMETER and OPTIONS sent to the client while streaming",
    "bogus-rtp-info": "RTP-Info with another url, seq=abc, rtptime=-426852246 and a trailing ; (moonfire-nvr#224, retina#117)",
    # RTP
    "startcode-payload": "single NAL unit payloads that begin with 00 00 00 01 (retina#68/#100, V380)",
    "empty-fua-end": "FU-A whose end fragment carries no payload byte (retina#115)",
    "marker-on-parameter-sets": "SPS/PPS with the previous picture's timestamp, the marker bit on SPS (retina#13, Reolink)",
    "no-marker": "the marker bit never set",
    "fua-start-end": "NAL units that fit sent as FU-A with both S and E set (retina#131, OpenIPC)",
    "timestamp-jump": "now and then a picture stamped hours away (bluenviron/mediamtx#6255, Intelbras)",
    # Transport
    "udp-only": "SETUP over TCP answered 461",
    "tcp-only": "SETUP over UDP answered 461",
    "udp-blocked": "SETUP over UDP answered 200, but no packet ever arrives (a firewall on the way)",
}
# What `all` leaves out: the alternatives of what it has (no-sprop, empty-fmtp, content-base-path,
# control-absolute, no-marker) and the transports that exclude each other (udp-only, tcp-only).
ALL = [q for q in QUIRKS if q not in ("no-sprop", "empty-fmtp", "content-base-path", "control-absolute",
                                      "no-marker", "udp-only", "tcp-only")]
MTU = 1200
JUNK = bytes([0x1D, 0xC4, 0x24, 0x01, 0x00, 0x04, 0x11, 0xE9, 0xDB, 0x0D, 0x0A, 0xCA, 0x52, 0x54, 0x00])

parser = argparse.ArgumentParser()
parser.add_argument("file")
parser.add_argument("--port", type=int, default=0)
parser.add_argument("--fps", type=float, default=30)
parser.add_argument("--rate", type=float, default=120)
parser.add_argument("--quirk", action="append", default=[], choices=list(QUIRKS) + ["all"])
args = parser.parse_args()
quirks = set(ALL if "all" in args.quirk else args.quirk)


def nal_units(data):
    """The NAL units of Annex-B data (trailing zero bytes dropped)."""
    starts = [m.end() for m in re.finditer(b"\x00\x00\x01", data)]
    units = []
    for i, start in enumerate(starts):
        end = starts[i + 1] - 3 if i + 1 < len(starts) else len(data)
        unit = data[start:end].rstrip(b"\x00")
        if unit:
            units.append(unit)
    return units


def access_units(units):
    """NAL units grouped into access units: a new one at an SEI/SPS/PPS/AUD after a slice, or at
    a slice with first_mb_in_slice 0 (its first bit set) after a slice (clause 7.4.1.2.3)."""
    groups, current, has_slice = [], [], False
    for unit in units:
        kind = unit[0] & 0x1F
        first_slice = kind in (1, 5) and len(unit) > 1 and unit[1] & 0x80
        if current and has_slice and (kind in (6, 7, 8, 9) or first_slice):
            groups.append(current)
            current, has_slice = [], False
        current.append(unit)
        has_slice = has_slice or kind in (1, 5)
    if current:
        groups.append(current)
    return groups


UNITS = nal_units(open(args.file, "rb").read())
AUS = access_units(UNITS)
SPS = next(u for u in UNITS if u[0] & 0x1F == 7)
PPS = next(u for u in UNITS if u[0] & 0x1F == 8)


def sdp(port):
    plid = base64.b64encode(SPS[1:4]).decode() if "plid-base64" in quirks else SPS[1:4].hex().upper()
    sprop = base64.b64encode(SPS).decode() + "," + base64.b64encode(PPS).decode()
    if "bad-sprop" in quirks:
        sprop = "6QDwBE/LCAAAH0gAB1TgIAAAAAA=,AAAAAA=="
    fmtp = "a=fmtp:96 packetization-mode=1;profile-level-id=" + plid
    if "no-sprop" not in quirks:
        fmtp += ";sprop-parameter-sets=" + sprop
    if "empty-fmtp" in quirks:
        fmtp = "a=fmtp:96"
    session, media = "", "trackID=1"
    if "control-absolute" in quirks:
        session, media = "a=control:rtsp://127.0.0.1:%d/stream\r\n" % port, "rtsp://127.0.0.1:%d/stream/trackID=1" % port
    if "control-star" in quirks:
        session, media = "a=control:*\r\n", "*"
    lines = "v=0\r\n" + ("" if "no-origin" in quirks else "o=- 1 1 IN IP4 127.0.0.1\r\n")
    lines += "s=quirky camera\r\nt=0 0\r\n" + session + "m=video 0 RTP/AVP 96\r\nc=IN IP4 0.0.0.0\r\n"
    lines += "a=rtpmap:96 H264/90000" + (" " if "rtpmap-space" in quirks else "") + "\r\n" + fmtp + "\r\na=control:" + media + "\r\n"
    return lines


def path_of(uri):
    """The path of a Request-URI, whatever its form: rtsp://HOST/PATH, HOST:PORT/PATH or /PATH."""
    if "://" in uri:
        uri = uri.split("://", 1)[1]
    if not uri.startswith("/"):
        uri = uri[uri.find("/"):] if "/" in uri else "/"
    return uri.split("?")[0].rstrip("/") or "/"


def payloads(unit, index, mode0):
    """The RTP payloads of one NAL unit."""
    if mode0 or len(unit) <= MTU:
        if not mode0 and "fua-start-end" in quirks and ("startcode-payload" not in quirks or index % 2):
            return [bytes([(unit[0] & 0xE0) | 28, 0xC0 | (unit[0] & 0x1F)]) + unit[1:]]
        return [(b"\x00\x00\x00\x01" if "startcode-payload" in quirks else b"") + unit]
    indicator, kind, body = (unit[0] & 0xE0) | 28, unit[0] & 0x1F, unit[1:]
    pieces = [body[i:i + MTU] for i in range(0, len(body), MTU)]
    if "empty-fua-end" in quirks:
        pieces.append(b"")
    out = []
    for i, piece in enumerate(pieces):
        flags = (0x80 if i == 0 else 0) | (0x40 if i == len(pieces) - 1 else 0)
        out.append(bytes([indicator, flags | kind]) + piece)
    return out


def packets(au, number, sequence):
    """The RTP packets of access unit `number` (timestamps at --fps), from sequence number `sequence`."""
    step = round(90000 / args.fps)
    stamp = 1000 + number * step
    if "timestamp-jump" in quirks and number % 7 == 3:
        stamp += 37600 * 90000
    stamp &= 0xFFFFFFFF
    sent, mode0 = [], "empty-fmtp" in quirks
    for index, unit in enumerate(au):
        kind = unit[0] & 0x1F
        unit_stamp = stamp
        if "marker-on-parameter-sets" in quirks and kind in (7, 8) and number > 0:
            unit_stamp = (1000 + (number - 1) * step) & 0xFFFFFFFF
        chunks = payloads(unit, index, mode0)
        for position, payload in enumerate(chunks):
            last = index == len(au) - 1 and position == len(chunks) - 1
            marker = last and "no-marker" not in quirks
            if "marker-on-parameter-sets" in quirks and kind == 7:
                marker = True
            header = struct.pack("!BBHII", 0x80, (0x80 if marker else 0) | 96, sequence & 0xFFFF, unit_stamp, 0x51C4)
            sent.append(header + payload)
            sequence += 1
    return sent, sequence


class Session(socketserver.BaseRequestHandler):
    def setup(self):
        self.lock = threading.Lock()
        self.udp = None
        self.client_ports = None
        self.channels = None
        self.streaming = threading.Event()
        self.stopped = threading.Event()
        self.port = self.server.server_address[1]

    def send(self, data):
        with self.lock:
            try:
                self.request.sendall(data)
            except OSError:
                self.stopped.set()

    def send_rtp(self, packet):
        if self.channels is not None:
            prefix = JUNK if "junk-before-reply" in quirks and packet[3] % 10 == 0 else b""
            self.send(prefix + struct.pack("!cBH", b"$", self.channels[0], len(packet)) + packet)
        elif self.udp is not None and "udp-blocked" not in quirks:
            self.udp.sendto(packet, ("127.0.0.1", self.client_ports[0]))

    def answer(self, cseq, status, headers=(), body=b""):
        lines = ["RTSP/1.0 " + status]
        if cseq is not None and "no-cseq" not in quirks:
            lines.append("CSeq: " + cseq)
        lines += ["%s: %s" % pair for pair in headers]
        if body:
            lines.append("Content-Length: %d" % len(body))
        prefix = (b"\r\n" if "crlf-before-reply" in quirks else b"") + (JUNK if "junk-before-reply" in quirks else b"")
        self.send(prefix + ("\r\n".join(lines) + "\r\n\r\n").encode() + body)

    def stream(self, number, sequence):
        while not self.stopped.is_set():
            au = AUS[number % len(AUS)]
            sent, sequence = packets(au, number, sequence)
            for packet in sent:
                self.send_rtp(packet)
            if "server-requests" in quirks and number in (3, 10):
                method = "GET_PARAMETER rtsp://127.0.0.1:%d/stream" % self.port if number == 3 else "OPTIONS *"
                self.send(("%s RTSP/1.0\r\nCSeq: %d\r\n\r\n" % (method, number)).encode())
            number += 1
            time.sleep(1 / args.rate)

    def handle(self):
        buffer = b""
        while not self.stopped.is_set():
            try:
                data = self.request.recv(65536)
            except OSError:
                break
            if not data:
                break
            buffer += data
            while True:
                if buffer[:1] == b"$":  # the client's RTCP, interleaved
                    if len(buffer) < 4 or len(buffer) < 4 + struct.unpack("!H", buffer[2:4])[0]:
                        break
                    buffer = buffer[4 + struct.unpack("!H", buffer[2:4])[0]:]
                    continue
                end = buffer.find(b"\r\n\r\n")
                if end < 0:
                    break
                head = buffer[:end].decode("latin-1").split("\r\n")
                headers = {}
                for line in head[1:]:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0"))
                if len(buffer) < end + 4 + length:
                    break
                buffer = buffer[end + 4 + length:]
                if head[0].startswith("RTSP/"):
                    continue  # the client's answer to a request of ours
                self.respond(head[0].split(" "), headers)
        self.stopped.set()
        if self.udp:
            self.udp.close()

    def respond(self, line, headers):
        method, uri = line[0], line[1] if len(line) > 1 else ""
        cseq = headers.get("cseq")
        track = "/stream" if "control-star" in quirks else "/stream/trackID=1"
        session = [("Session", "5EC7E7;timeout=60")]
        if method == "OPTIONS":
            self.answer(cseq, "200 OK", [("Public", "OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN, GET_PARAMETER")])
        elif method == "DESCRIBE":
            if path_of(uri) != "/stream":
                return self.answer(cseq, "404 Not Found")
            base = "rtsp://127.0.0.1:%d/stream/" % self.port
            if "content-base-no-scheme" in quirks:
                base = "127.0.0.1:%d/stream/" % self.port
            if "content-base-path" in quirks:
                base = "/stream/"
            self.answer(cseq, "200 OK", [("Content-Type", "application/sdp"), ("Content-Base", base)], sdp(self.port).encode())
        elif method == "SETUP":
            transport = headers.get("transport", "")
            tcp = "RTP/AVP/TCP" in transport.upper()
            if path_of(uri) != track:
                return self.answer(cseq, "404 Not Found")
            if (tcp and "udp-only" in quirks) or (not tcp and "tcp-only" in quirks):
                return self.answer(cseq, "461 Unsupported Transport")
            if tcp:
                found = re.search(r"interleaved=(\d+)-(\d+)", transport)
                self.channels = (int(found.group(1)), int(found.group(2))) if found else (0, 1)
                reply = "RTP/AVP/TCP;unicast;interleaved=%d-%d" % self.channels
            else:
                found = re.search(r"client_port=(\d+)(?:-(\d+))?", transport)
                self.client_ports = (int(found.group(1)), int(found.group(2) or int(found.group(1)) + 1))
                self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                self.udp.bind(("127.0.0.1", 0))
                server_port = self.udp.getsockname()[1]
                reply = "RTP/AVP;unicast;client_port=%d-%d;server_port=%d-%d" % (self.client_ports + (server_port, server_port + 1))
            self.answer(cseq, "200 OK", [("Transport", reply)] + session)
        elif method == "PLAY":
            if path_of(uri) != "/stream" or self.streaming.is_set():
                return self.answer(cseq, "455 Method Not Valid In This State")
            number, sequence = 0, 4242
            if "rtp-before-play-reply" in quirks:
                early, sequence = packets(AUS[0], 0, sequence)
                number = 1
                for packet in early:
                    self.send_rtp(packet)
            info = "url=rtsp://127.0.0.1:%d/stream/trackID=1;seq=%d;rtptime=1000" % (self.port, 4242)
            if "bogus-rtp-info" in quirks:
                info = "url=rtsp://elsewhere/track;seq=abc;rtptime=-426852246;"
            self.answer(cseq, "200 OK", session + [("Range", "npt=0.000-"), ("RTP-Info", info)])
            self.streaming.set()
            threading.Thread(target=self.stream, args=(number, sequence), daemon=True).start()
        elif method == "TEARDOWN":
            self.answer(cseq, "200 OK", session)
            self.stopped.set()
        elif method in ("GET_PARAMETER", "SET_PARAMETER"):
            self.answer(cseq, "200 OK", session)
        else:
            self.answer(cseq, "501 Not Implemented")


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


server = Server(("127.0.0.1", args.port), Session)
print("quirky-camera: serving rtsp://127.0.0.1:%d/stream" % server.server_address[1], flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    pass
sys.exit(0)
