public import H264
import H264SessionCore

/// The waits for the encoding queue as async functions: each suspends the calling task and is
/// resumed from the queue when its condition holds, so no thread — above all no thread of the
/// cooperative pool — blocks while x264 works. Each is the twin of a blocking wait of the same
/// meaning, for code that is not async (a capture callback, a plain thread).
extension EncoderSession {
    /// Delivers every pending output — queued frames, x264's lookahead, B-frames and frame
    /// threads — and returns after the last was delivered, suspending the task meanwhile
    /// (VideoToolbox's `VTCompressionSessionCompleteFrames`); the async twin of
    /// ``completeFrames()``. The next frame starts a fresh encoder with an IDR.
    ///
    /// A task started from the output handler may call it (it suspends; it does not wait for
    /// the queue's own thread). With ``frames`` made `.waitingForConsumer`, someone must read
    /// ``frames`` meanwhile, or the flush waits for room.
    ///
    /// - Throws: `MediaError.Code.invalidState` after invalidate; an error x264 reported while
    ///   encoding; `MediaError.Code.outputHandlerFailed` once a throwing output handler threw.
    public func completeFramesAsync() async throws(MediaError) {
        try await flushAndWaitAsync("completeFrames", codec: \.current) { lane, deliver in
            for encoded in try lane.flush() { deliver(encoded) }
        }
    }

    /// Suspends until every frame accepted so far has been handed to x264 (without flushing
    /// x264's own delay): the async twin of ``waitForQueuedFrames()``.
    ///
    /// - Throws: `MediaError.Code.outputHandlerFailed` once a throwing output handler threw
    ///   (the output has ended: there is no point in feeding more frames).
    public func waitForQueuedFramesAsync() async throws(MediaError) {
        await jobs.queuedWorkDone()
        try sink.checkOutput()
    }

    /// Suspends until at most `count` of the frames accepted by
    /// ``encode(_:presentationTimeStamp:duration:forceKeyframe:)`` are still waiting to be
    /// handed to x264, the one being handed over included: the async twin of
    /// ``waitForQueuedFrames(downTo:)``, bounded back-pressure for a producer in a task. The
    /// task is resumed by the queue as the frame that brings the count down is released, so
    /// the buffers of all but the last `count` frames passed to `encode` are the caller's alone
    /// again.
    ///
    /// - Parameter count: how many frames may still be waiting; a negative count is taken as 0.
    /// - Throws: `MediaError.Code.outputHandlerFailed` once a throwing output handler threw.
    public func waitForQueuedFramesAsync(downTo count: Int) async throws(MediaError) {
        await jobs.jobsFinished(downTo: count)
        try sink.checkOutput()
    }
}
