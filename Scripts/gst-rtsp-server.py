#!/usr/bin/python3
# A GStreamer RTSP server (gst-rtsp-server through python3-gi) for the examples: a live
# 320x240 30 fps test pattern encoded with openh264 at rtsp://127.0.0.1:PORT/test.
# Prints one line, `gst-rtsp-server: serving rtsp://127.0.0.1:PORT/test`, on standard output
# once it listens, then serves until SIGINT or SIGTERM.
# Usage: /usr/bin/python3 Scripts/gst-rtsp-server.py [PORT]   (0, the default: a free port)
# Needs Debian's python3-gi and gir1.2-gst-rtsp-server-1.0 (Scripts/install-deps.sh).
import signal
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402

Gst.init(None)
server = GstRtspServer.RTSPServer()
server.set_address("127.0.0.1")
server.set_service(sys.argv[1] if len(sys.argv) > 1 else "0")
factory = GstRtspServer.RTSPMediaFactory()
factory.set_launch(
    "( videotestsrc is-live=true pattern=ball ! video/x-raw,format=I420,width=320,height=240,framerate=30/1"
    " ! openh264enc gop-size=30 ! h264parse ! rtph264pay name=pay0 pt=96 config-interval=-1 )"
)
factory.set_shared(True)
server.get_mount_points().add_factory("/test", factory)
if server.attach(None) == 0:
    sys.exit("gst-rtsp-server: cannot listen on 127.0.0.1:%s" % server.get_service())

loop = GLib.MainLoop()
for number in (signal.SIGINT, signal.SIGTERM):
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, number, loop.quit)
print("gst-rtsp-server: serving rtsp://127.0.0.1:%d/test" % server.get_bound_port(), flush=True)
loop.run()
