public import H264
import H264SessionCore

/// The waits for the decoding queue: delayed frames, queued access units.
extension DecoderSession {
    /// Outputs every delayed frame and waits until all queued access units are decoded and
    /// their frames delivered (VideoToolbox's `VTDecompressionSessionWaitForAsynchronousFrames`).
    /// The session stays usable: the next access unit should begin with a keyframe, as after a
    /// seek.
    ///
    /// - Throws: `MediaError.Code.invalidState` after invalidate or from inside the output
    ///   handler (it would wait for itself); an error libavcodec reported while decoding.
    public func waitForAsynchronousFrames() throws(MediaError) {
        try flushAndWait("waitForAsynchronousFrames", codec: \.decoder) { try $0.drain(deliver: $1) }
    }

    /// Asks for the delayed frames without waiting for them (VideoToolbox's
    /// `VTDecompressionSessionFinishDelayedFrames`): they are output after the access units
    /// already queued. The session stays usable.
    ///
    /// - Throws: `MediaError.Code.invalidState` after invalidate; an error libavcodec
    ///   reported while decoding an earlier access unit.
    public func finishDelayedFrames() throws(MediaError) {
        try flushLater("finishDelayedFrames", codec: \.decoder) { try $0.drain(deliver: $1) }
    }

    /// Blocks until at most `count` queued access units wait for libavcodec (the one being
    /// decoded included): back-pressure for a producer that reads faster than libavcodec
    /// decodes. A receiving thread of a live stream should not call it.
    ///
    /// - Throws: `MediaError.Code.invalidState` from inside the output handler.
    public func waitForQueuedAccessUnits(downTo count: Int) throws(MediaError) {
        try jobs.checkNotCurrent("waitForQueuedAccessUnits")
        jobs.waitForJobs(downTo: count)
    }

    /// Waits until every queued job has run (tests).
    func waitForQueue() {
        jobs.sync {}
    }
}
