import Foundation
import H264TestSupport
import Testing

/// `GStreamerShutdownRace` recognises only GStreamer's two PAUSE-send errors, as
/// `gst-launch-1.0 -q` printed them in a run that hit the race.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct GStreamerShutdownRaceTests {
    static let race = """
        ERROR: from element /GstPipeline:pipeline0/GstRTSPSrc:rtspsrc0: Could not write to resource.
        Additional debug info:
        ../gst/rtsp/gstrtspsrc.c(6766): gst_rtspsrc_try_send (): /GstPipeline:pipeline0/GstRTSPSrc:rtspsrc0:
        Could not send message. (Received end-of-file)
        ERROR: from element /GstPipeline:pipeline0/GstRTSPSrc:rtspsrc0: Could not write to resource.
        Additional debug info:
        ../gst/rtsp/gstrtspsrc.c(9240): gst_rtspsrc_pause (): /GstPipeline:pipeline0/GstRTSPSrc:rtspsrc0:
        Could not send message. (Received end-of-file)

        """

    @Test func theRaceIsRecognised() {
        let report = GStreamerShutdownRace.split(Self.race)
        #expect(report.raceErrors == 2)
        #expect(!report.rest.contains("ERROR") && !report.rest.contains("WARNING"))
    }

    /// The server's events in a run that hit the race (as in CI), and of a connection that closed.
    @Test func theServerEventsTellATeardownFromAClosedConnection() {
        let played: [[String: String]] = [["event": "session-playing", "session": "653758C60DB2742D", "client": "1"],
                                          ["event": "viewer-left", "client": "1", "framesSent": "60"]]
        let ended = ["event": "session-ended", "session": "653758C60DB2742D", "reason": "teardown"]
        #expect(GStreamerShutdownRace.serverSawTeardown(played + [ended]))
        #expect(!GStreamerShutdownRace.serverSawTeardown(played))
        #expect(!GStreamerShutdownRace.serverSawTeardown(played + [ended.merging(["reason": "connection closed"]) { $1 }]))
    }

    @Test func otherErrorsAndWarningsStay() {
        let other = """
            ERROR: from element /GstPipeline:pipeline0/GstRTSPSrc:rtspsrc0: Could not read from resource.
            Additional debug info:
            ../gst/rtsp/gstrtspsrc.c(6795): gst_rtspsrc_try_send (): /GstPipeline:pipeline0/GstRTSPSrc:rtspsrc0:
            Could not receive message. (Timeout while waiting for server response)
            WARNING: from element /GstPipeline:pipeline0/GstRTSPSrc:rtspsrc0: The server closed the connection.

            """
        let report = GStreamerShutdownRace.split(Self.race + other)
        #expect(report.raceErrors == 2)
        #expect(report.rest.contains("ERROR: from element") && report.rest.contains("WARNING: from element"))
        #expect(GStreamerShutdownRace.split(other).raceErrors == 0)
    }
}
