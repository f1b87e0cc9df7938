public import H264
import H264SessionCore

/// The waits for the decoding queue: delayed frames, queued access units — each blocking wait
/// beside its async twin, which suspends the task and is resumed from the queue when its
/// condition holds (no thread of the cooperative pool blocks while libavcodec works).
extension DecoderSession {
    /// Outputs every delayed frame and waits until all queued access units are decoded and
    /// their frames delivered (VideoToolbox's `VTDecompressionSessionWaitForAsynchronousFrames`).
    /// The session stays usable: the next access unit should begin with a keyframe, as after a
    /// seek. Blocks the calling thread: async code calls ``waitForAsynchronousFramesAsync()``.
    ///
    /// - Throws: `MediaError.Code.invalidState` after invalidate or from inside the output
    ///   handler (it would wait for itself); an error libavcodec reported while decoding;
    ///   `MediaError.Code.outputHandlerFailed` once a throwing output handler threw.
    public func waitForAsynchronousFrames() throws(MediaError) {
        try flushAndWait("waitForAsynchronousFrames", codec: \.decoder) { try $0.drain(deliver: $1) }
    }

    /// Outputs every delayed frame and suspends the task until all queued access units are
    /// decoded and their frames delivered: the async twin of ``waitForAsynchronousFrames()``
    /// (VideoToolbox's `VTDecompressionSessionWaitForAsynchronousFrames`). A task started from
    /// the output handler may call it. With ``frames`` made `.waitingForConsumer`, someone must
    /// read ``frames`` meanwhile.
    ///
    /// - Throws: `MediaError.Code.invalidState` after invalidate; an error libavcodec reported
    ///   while decoding; `MediaError.Code.outputHandlerFailed` once a throwing output handler
    ///   threw.
    public func waitForAsynchronousFramesAsync() async throws(MediaError) {
        try await flushAndWaitAsync("waitForAsynchronousFrames", codec: \.decoder) { try $0.drain(deliver: $1) }
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
    /// decodes. A receiving thread of a live stream should not call it; async code calls
    /// ``waitForQueuedAccessUnitsAsync(downTo:)``.
    ///
    /// - Throws: `MediaError.Code.invalidState` from inside the output handler;
    ///   `MediaError.Code.outputHandlerFailed` once a throwing output handler threw.
    public func waitForQueuedAccessUnits(downTo count: Int) throws(MediaError) {
        try jobs.checkNotCurrent("waitForQueuedAccessUnits")
        jobs.waitForJobs(downTo: count)
        try sink.checkOutput()
    }

    /// Suspends the task until at most `count` queued access units wait for libavcodec (the
    /// one being decoded included): the async twin of ``waitForQueuedAccessUnits(downTo:)``,
    /// resumed by the decoding queue as the access unit that brings the count down finishes.
    ///
    /// - Parameter count: how many access units may still wait; a negative count is taken as 0.
    /// - Throws: `MediaError.Code.outputHandlerFailed` once a throwing output handler threw.
    public func waitForQueuedAccessUnitsAsync(downTo count: Int) async throws(MediaError) {
        await jobs.jobsFinished(downTo: count)
        try sink.checkOutput()
    }

    /// Waits until every queued job has run (tests).
    func waitForQueue() {
        jobs.sync {}
    }
}
