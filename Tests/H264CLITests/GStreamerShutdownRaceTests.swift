import Foundation
import Testing

/// `GStreamerShutdownRace` recognises only GStreamer's two PAUSE-send errors, as
/// `gst-launch-1.0 -q` printed them in a run that hit the race.
@Suite struct GStreamerShutdownRaceTests {
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

    /// The server's side of a run that hit the race (from CI), and of a connection that closed.
    @Test func theServerLogTellsATeardownFromAClosedConnection() {
        let teardown = """
            h264 serve: RTSP [IPv4]127.0.0.1/127.0.0.1:40516: session 653758C60DB2742D plays as client 1
            h264 serve: client 1 left after 60 frames
            h264 serve: RTSP session 653758C60DB2742D ended (teardown)
            h264 serve: served 65 frames to 1 clients (at most 1 at once; 0 skipped to an IDR); stopped by signal

            """
        #expect(GStreamerShutdownRace.serverSawTeardown(teardown))
        #expect(!GStreamerShutdownRace.serverSawTeardown(
            teardown.replacingOccurrences(of: "ended (teardown)", with: "ended (connection closed)")))
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
