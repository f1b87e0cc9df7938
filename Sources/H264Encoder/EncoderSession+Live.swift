public import H264
import H264SessionCore

/// Live changes (rates, prewarmed encoders for a size change) and the waits for the encoding
/// queue.
extension EncoderSession {
    /// Changes the average bit rate live (VideoToolbox sets `AverageBitRate` on a running
    /// session). Before prepare it simply configures.
    /// The corresponding x264 call is `x264_encoder_reconfig`: no new session, no extra IDR.
    ///
    /// H.265 sessions change the rate with a new libx265 encoder: frames accepted before this
    /// call finish on the old one, and the next frame is the new encoder's first, an IRAP
    /// picture, as after ``switchToPrewarmedSession()``. libx265 3.5 accepts a new `rc.bitrate`
    /// in `x265_encoder_reconfig` (it returns 0) but its output rate does not follow it —
    /// measured at 320×240, 30 fps, ABR at 200 kbit/s changed to 1 Mbit/s after 90 frames: 781
    /// bytes per frame before, 827–849 after, with or without VBV and tune `zerolatency`, in our
    /// session and in a plain C loop over libx265 alike. A prewarmed encoder is opened again
    /// with the new rate too. Opening an encoder costs real time: this call blocks for it.
    ///
    /// - Throws: `MediaError.Code.invalidConfiguration` for a rate outside
    ///   1000…1000000000 or in constant-quality mode; `MediaError.Code.encoderFailed` when
    ///   libx265 cannot open; `MediaError.Code.invalidState` after invalidate.
    public func setAverageBitRate(_ bitsPerSecond: Int) throws(MediaError) {
        var reopen = false
        try changeLive { (c, encoderOpen) throws(MediaError) in
            guard c.constantRateFactor == nil else {
                throw MediaError(.invalidConfiguration, field: "averageBitRate", "the session encodes at constant quality (constantRateFactor)")
            }
            c.averageBitRate = bitsPerSecond
            reopen = c.codec == .hevc && encoderOpen
        }
        if reopen { try reopenLanes() }
    }

    /// Replaces the open encoders (the current one and a prewarmed one) with new ones of the
    /// session's configuration and the same sizes: the current one's delayed frames are
    /// delivered first, and the next frame is the new encoder's first, a keyframe.
    private func reopenLanes() throws(MediaError) {
        let (configuration, open) = try shared.withLock { (s) throws(MediaError) -> (EncoderConfiguration, [Lane?]) in
            try s.lifecycle.apply(.use("rate change"))
            return (s.configuration, [s.current, s.prewarmed])
        }
        var lanes: [Lane?] = []
        for old in open {
            guard let old else { lanes.append(nil); continue }
            let lane = Lane(width: old.width, height: old.height, configuration: configuration, logger: logger)
            _ = try lane.open()
            lanes.append(lane)
        }
        // A lane that changed meanwhile (a switch, a prewarm) is left as it is: its replacement
        // is closed instead.
        let closing: [Lane] = shared.withLock { s in
            guard !s.lifecycle.isInvalidated else { return lanes.compactMap { $0 } }
            var closing: [Lane] = []
            if let next = lanes[0] {
                if let old = s.current, old === open[0] {
                    enqueueRetire(old)
                    s.current = next
                } else {
                    closing.append(next)
                }
            }
            if let next = lanes[1] {
                if let old = s.prewarmed, old === open[1] {
                    closing.append(old)
                    s.prewarmed = next
                } else {
                    closing.append(next)
                }
            }
            return closing
        }
        for lane in closing { jobs.async { lane.close() } }
    }

    /// Changes the data-rate limits (VBV) live, without a new IDR.
    /// The corresponding x264 call is `x264_encoder_reconfig`; the x265 call is `x265_encoder_reconfig`.
    ///
    /// - Throws: `MediaError.Code.invalidConfiguration` naming a bad limit;
    ///   `MediaError.Code.invalidState` after invalidate.
    public func setDataRateLimits(_ limits: [EncoderConfiguration.DataRateLimit]) throws(MediaError) {
        try changeLive { (c, _) throws(MediaError) in c.dataRateLimits = limits }
    }

    /// `change` gets the configuration, and whether an encoder is open (one to reconfigure).
    private func changeLive(_ change: (inout EncoderConfiguration, Bool) throws(MediaError) -> Void) throws(MediaError) {
        try shared.withLock { (s) throws(MediaError) in
            try s.lifecycle.apply(.use("rate change"))
            var updated = s.configuration
            try change(&updated, s.current != nil || s.prewarmed != nil)
            try updated.validate()
            s.configuration = updated
            for lane in [s.current, s.prewarmed].compactMap({ $0 }) {
                let sink = self.sink
                jobs.async { [updated] in
                    do { try lane.reconfigure(updated) } catch { sink.record(error) }
                }
            }
        }
    }

    /// Prepares a second encoder for an anticipated size change (x264 opening costs real time:
    /// do it here, off the capture path). Replaces an earlier prewarmed encoder.
    ///
    /// - Throws: `MediaError.Code.invalidFrame` for a bad size;
    ///   `MediaError.Code.invalidState` after invalidate;
    ///   `MediaError.Code.encoderFailed` when x264 cannot open.
    public func prewarm(width: Int, height: Int) throws(MediaError) {
        try Self.validateSize(width: width, height: height)
        let configuration = try shared.withLock { (s) throws(MediaError) -> EncoderConfiguration in
            try s.lifecycle.apply(.use("prewarm"))
            return s.configuration
        }
        let lane = Lane(width: width, height: height, configuration: configuration, logger: logger)
        _ = try lane.open()
        let replaced: Lane? = shared.withLock { s in
            guard !s.lifecycle.isInvalidated else { return lane }
            let old = s.prewarmed
            s.prewarmed = lane
            return old
        }
        if let replaced { jobs.async { replaced.close() } }
    }

    /// Switches atomically to the prewarmed encoder: frames accepted before this call finish
    /// on the old encoder (its delayed outputs are delivered first, then it is closed); the next
    /// frame is the new encoder's first output, an IDR with the new SPS, PPS and format
    /// description. Frames must then have the prewarmed size.
    ///
    /// - Throws: `MediaError.Code.invalidState` when nothing is prewarmed or after
    ///   invalidate.
    public func switchToPrewarmedSession() throws(MediaError) {
        try shared.withLock { (s) throws(MediaError) in
            var lifecycle = s.lifecycle
            try lifecycle.apply(.run("switch"))
            guard let next = s.prewarmed else {
                throw MediaError(.invalidState, "no prewarmed session: call prewarm(width:height:) first")
            }
            if let old = s.current { enqueueRetire(old) }
            s.current = next
            s.prewarmed = nil
            s.width = next.width
            s.height = next.height
            s.lifecycle = lifecycle
        }
    }

    /// Queues the flush of `lane`'s delayed frames (delivered in order) and its closing.
    func enqueueRetire(_ lane: Lane) {
        let sink = self.sink
        jobs.async {
            sink.run {
                for encoded in try lane.flush() { sink.deliver(encoded) }
            }
            lane.close()
        }
    }

    /// Blocks until every frame accepted so far has been handed to x264 (without flushing
    /// x264's own delay): back-pressure for producers that read faster than x264 encodes, such
    /// as a file transcoder, so queued frames do not pile up in memory. Capture code should not
    /// call it. Blocks the calling thread: async code calls ``waitForQueuedFramesAsync()``.
    ///
    /// - Throws: `MediaError.Code.invalidState` from inside the output handler;
    ///   `MediaError.Code.outputHandlerFailed` once a throwing output handler threw.
    public func waitForQueuedFrames() throws(MediaError) {
        try jobs.checkNotCurrent("waitForQueuedFrames")
        jobs.sync {}
        try sink.checkOutput()
    }

    /// Blocks until at most `count` of the frames accepted by ``encode(_:presentationTimeStamp:duration:forceKeyframe:)``
    /// are still waiting to be handed to x264, the one being handed over included: bounded
    /// back-pressure for a producer that reads faster than x264 encodes (a file, a decoder). The
    /// encoder keeps `count` frames in hand, so it never waits for the producer, while the
    /// producer never gets more than `count` frames ahead.
    ///
    /// A frame handed to x264 is released at once (x264 keeps its own copy of the pixels), so
    /// after this returns, the buffers of all but the last `count` frames passed to `encode` are
    /// the caller's alone again: an array behind one can be refilled in place, without a copy.
    /// ``waitForQueuedFrames()`` waits for every frame (and for a pending flush or switch).
    /// Blocks the calling thread: async code calls ``waitForQueuedFramesAsync(downTo:)``.
    ///
    /// - Parameter count: how many frames may still be waiting; a negative count is taken as 0.
    /// - Throws: `MediaError.Code.invalidState` from inside the output handler (it would
    ///   wait for itself); `MediaError.Code.outputHandlerFailed` once a throwing output
    ///   handler threw.
    public func waitForQueuedFrames(downTo count: Int) throws(MediaError) {
        try jobs.checkNotCurrent("waitForQueuedFrames")
        jobs.waitForJobs(downTo: count)
        try sink.checkOutput()
    }

    /// Waits until every queued job has run (tests).
    func waitForQueue() {
        jobs.sync {}
    }
}
