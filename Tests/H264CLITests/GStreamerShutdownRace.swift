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
}
