import H264TestSupport
import Testing

/// GStreamer 1.22's `rtspsrc` over TCP races with itself when a pipeline shuts down after EOS:
/// the application thread flushes the RTSP connection (to stop the interleaved-data loop) while
/// `rtspsrc`'s own thread writes the PAUSE request, the write is cancelled, and `rtspsrc`
/// posts "Could not send message. (Received end-of-file)" twice (from `gst_rtspsrc_try_send`
/// and `gst_rtspsrc_pause`). The PAUSE never leaves the client: its `GST_DEBUG=rtspsrc:5`
/// log shows `connection flush busy PAUSE` just before, and the server sees only the TEARDOWN
/// that follows. Seen in about one run in fifteen with six pipelines at once on two cores.
///
/// The tests recognise exactly those two errors after all frames were decoded, and then ask
/// the server (its events) whether the connection stayed healthy (the TEARDOWN reached it); every other
/// error or warning still fails them.
enum GStreamerShutdownRace {
    /// True when the events of `h264 serve --rtsp … --events -` show a session ended by the
    /// client's TEARDOWN (the connection stayed usable to the end), not by a closed connection
    /// or a timeout.
    static func serverSawTeardown(_ serverEvents: [[String: String]]) -> Bool {
        serverEvents.contains { $0["event"] == "session-ended" && $0["reason"] == "teardown" }
    }

    /// The race's errors in `stderr` of `gst-launch-1.0 -q`, and everything else it printed.
    static func split(_ stderr: String) -> (raceErrors: Int, rest: String) {
        var raceErrors = 0
        var rest = ""
        // Each message starts with "ERROR: " or "WARNING: " at the start of a line; its
        // "Additional debug info" lines follow until the next one.
        var blocks: [String] = []
        for line in stderr.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("ERROR: ") || line.hasPrefix("WARNING: ") || blocks.isEmpty {
                blocks.append(String(line))
            } else {
                blocks[blocks.count - 1] += "\n" + line
            }
        }
        for block in blocks {
            let isRace = block.hasPrefix("ERROR: from element ") && block.contains("GstRTSPSrc")
                && block.contains("Could not send message. (Received end-of-file)")
                && (block.contains("gst_rtspsrc_try_send ()") || block.contains("gst_rtspsrc_pause ()"))
            if isRace { raceErrors += 1 } else { rest += block + "\n" }
        }
        return (raceErrors, rest)
    }

    /// The `rtspsrc … ! rtph264depay ! avdec_h264 ! identity eos-after=N ! y4menc ! fdsink fd=1`
    /// of `frames` decoded pictures, for `gst-launch-1.0 -q` to play `url` with `options`.
    static func decodingPipeline(_ url: String, _ options: [String], frames: Int) -> [String] {
        ["30", "gst-launch-1.0", "-q", "rtspsrc", "location=\(url)"] + options
            + ["!", "rtph264depay", "!", "avdec_h264", "!", "identity", "eos-after=\(frames)", "!", "y4menc", "!", "fdsink", "fd=1"]
    }

    /// Whole I420 `width`×`height` pictures in the y4m stream `stdout` (the header line, then
    /// `FRAME\n` and the planes for each).
    static func decodedPictures(_ stdout: [UInt8], width: Int = 320, height: Int = 240) -> Int {
        guard let header = stdout.firstIndex(of: 0x0A) else { return 0 }
        return (stdout.count - header - 1) / (6 + width * height * 3 / 2)
    }

    /// What a play of `decodingPipeline` must show: at least `frames` decoded pictures (buffers
    /// already past `identity` when it sends EOS may follow), no error or warning but the race's,
    /// and exit status 0, or else the race with the server's word that the connection stayed
    /// healthy to the TEARDOWN (`serverEvents`, the server's `--events`).
    static func expectPlayed(_ gst: Subprocess.Output, frames: Int, serverEvents: [[String: String]],
                             sourceLocation: SourceLocation = #_sourceLocation) {
        let report = split(gst.stderr)
        if report.raceErrors > 0 {
            #expect(serverSawTeardown(serverEvents), "\(gst.stderr)\n\(serverEvents)", sourceLocation: sourceLocation)
        } else {
            #expect(gst.status == 0, "\(gst.stderr)", sourceLocation: sourceLocation)
        }
        #expect(!report.rest.contains("ERROR") && !report.rest.contains("WARNING"), "\(gst.stderr)", sourceLocation: sourceLocation)
        #expect(decodedPictures(gst.stdout) >= frames, "\(gst.stdout.count) bytes of y4m", sourceLocation: sourceLocation)
    }
}
