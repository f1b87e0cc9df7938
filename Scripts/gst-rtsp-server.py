#!/usr/bin/python3
# A GStreamer RTSP server (gst-rtsp-server through python3-gi) for the examples and the client
# tests: a live 320x240 30 fps test pattern encoded with openh264 (or, with --matroska, an H.264
# file's frames as they are) at rtsp://127.0.0.1:PORT/test.
# Prints one line, `gst-rtsp-server: serving rtsp://127.0.0.1:PORT/test`, on standard output
# once it listens, then serves until SIGINT or SIGTERM.
# Usage: /usr/bin/python3 Scripts/gst-rtsp-server.py [PORT] [options]   (PORT 0, the default: a free port)
#   --auth basic|digest       ask for --user/--password (default user/password) with that scheme (401 without)
#   --session-timeout N       sessions time out after N seconds without a keepalive (default 60)
#   --protocols udp|tcp       serve RTP over that lower transport only (SETUP of the other: 461)
#   --tls-certificate PEM --tls-key PEM   serve RTSPS (rtsps://; the line printed says so)
#   --matroska PATH           serve the H.264 track of a Matroska file (ffmpeg -framerate 30 -i X.264 -c copy
#                             X.mkv) instead, without re-encoding, at its timestamps, once through, one
#                             pipeline shared by every viewer (the media starts at the first PLAY). Not a raw
#                             Annex-B file: h264parse gives those no PTS, and rtph264pay then stamps every
#                             packet alike
#   --audio pcma|pcmu|aac|opus  a second media: a live tone as G.711 A-law (RTP payload type 8) or µ-law (0),
#                             as AAC-LC (avenc_aac, 48 kHz stereo) in RFC 3640 mpeg4-generic AAC-hbr (payload
#                             type 97), or as Opus (opusenc, 48 kHz stereo, RFC 7587, payload type 97)
#   --codec h265              H.265: the test pattern encoded by x265enc, or the H.265 track of --matroska,
#                             through h265parse and rtph265pay (RFC 7798)
# Needs Debian's python3-gi and gir1.2-gst-rtsp-server-1.0 (Scripts/install-deps.sh).
import argparse
import signal
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtsp", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import Gio, GLib, Gst, GstRtsp, GstRtspServer  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("port", nargs="?", default="0")
parser.add_argument("--auth", choices=["basic", "digest"])
parser.add_argument("--user", default="user")
parser.add_argument("--password", default="password")
parser.add_argument("--session-timeout", type=int)
parser.add_argument("--protocols", choices=["udp", "tcp"])
parser.add_argument("--tls-certificate")
parser.add_argument("--tls-key")
parser.add_argument("--matroska")
parser.add_argument("--codec", choices=["h264", "h265"], default="h264")
parser.add_argument("--audio", choices=["pcma", "pcmu", "aac", "opus"])
args = parser.parse_args()

Gst.init(None)
server = GstRtspServer.RTSPServer()
server.set_address("127.0.0.1")
server.set_service(args.port)
factory = GstRtspServer.RTSPMediaFactory()
if args.matroska:
    source = "filesrc location=\"%s\" ! matroskademux" % args.matroska
else:
    source = ("videotestsrc is-live=true pattern=ball ! video/x-raw,format=I420,width=320,height=240,framerate=30/1"
              + (" ! x265enc tune=zerolatency speed-preset=ultrafast key-int-max=30" if args.codec == "h265"
                 else " ! openh264enc gop-size=30"))
# --audio: a second media, a live 440 Hz tone as cameras with a microphone send it: G.711 A-law
# (static payload type 8), or AAC-LC in RFC 3640's mpeg4-generic (rtpmp4gpay: AAC-hbr).
audio = {
    "pcma": " audiotestsrc is-live=true freq=440 ! audio/x-raw,rate=8000,channels=1 ! alawenc ! rtppcmapay name=pay1 pt=8",
    "pcmu": " audiotestsrc is-live=true freq=440 ! audio/x-raw,rate=8000,channels=1 ! mulawenc ! rtppcmupay name=pay1 pt=0",
    "opus": (" audiotestsrc is-live=true freq=440 ! audioconvert ! audioresample ! audio/x-raw,rate=48000,channels=2"
             " ! opusenc ! rtpopuspay name=pay1 pt=97"),
    "aac": (" audiotestsrc is-live=true freq=440 ! audioconvert ! audioresample ! audio/x-raw,rate=48000,channels=2"
            " ! avenc_aac ! aacparse ! rtpmp4gpay name=pay1 pt=97"),
}.get(args.audio, "")
factory.set_launch("( %s ! %sparse ! rtp%spay name=pay0 pt=96 config-interval=-1%s )" % (source, args.codec, args.codec, audio))
factory.set_shared(True)
if args.protocols:
    factory.set_protocols(GstRtsp.RTSPLowerTrans.UDP if args.protocols == "udp" else GstRtsp.RTSPLowerTrans.TCP)
if args.auth or args.tls_certificate:
    # As gst-rtsp-server's examples test-auth.c and test-auth-digest.c: one user whose token has
    # the role "user", which may access and construct the factory's media (everyone, without --auth).
    auth = GstRtspServer.RTSPAuth()
    token = GstRtspServer.RTSPToken()
    token.set_string(GstRtspServer.RTSP_TOKEN_MEDIA_FACTORY_ROLE, "user")
    if args.tls_certificate:
        auth.set_tls_certificate(Gio.TlsCertificate.new_from_files(args.tls_certificate, args.tls_key))
    if not args.auth:
        auth.set_default_token(token)
    elif args.auth == "basic":
        auth.set_supported_methods(GstRtsp.RTSPAuthMethod.BASIC)
        auth.add_basic(GstRtspServer.RTSPAuth.make_basic(args.user, args.password), token)
    else:
        auth.set_supported_methods(GstRtsp.RTSPAuthMethod.DIGEST)
        auth.add_digest(args.user, args.password, token)
    server.set_auth(auth)
    permissions = GstRtspServer.RTSPPermissions()
    permissions.add_permission_for_role("user", GstRtspServer.RTSP_PERM_MEDIA_FACTORY_ACCESS, True)
    permissions.add_permission_for_role("user", GstRtspServer.RTSP_PERM_MEDIA_FACTORY_CONSTRUCT, True)
    factory.set_permissions(permissions)
if args.session_timeout:
    def client_connected(_server, client):
        client.connect("new-session", lambda _client, session: session.set_timeout(args.session_timeout))
    server.connect("client-connected", client_connected)
server.get_mount_points().add_factory("/test", factory)
if server.attach(None) == 0:
    sys.exit("gst-rtsp-server: cannot listen on 127.0.0.1:%s" % server.get_service())

loop = GLib.MainLoop()
for number in (signal.SIGINT, signal.SIGTERM):
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, number, loop.quit)
scheme = "rtsps" if args.tls_certificate else "rtsp"
print("gst-rtsp-server: serving %s://127.0.0.1:%d/test" % (scheme, server.get_bound_port()), flush=True)
loop.run()
