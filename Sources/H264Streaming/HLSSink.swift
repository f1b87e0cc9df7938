/// The HLS output of the live fan-out: a ``LiveSink`` that appends the broadcaster's frames,
/// video and audio, to an ``HLSLiveStream`` (which an ``HLSServer`` serves) and finishes it
/// when they end — the playlist then gets `EXT-X-ENDLIST`.
///
/// ```swift
/// let stream = HLSLiveStream()
/// server.mount(path: "/live", stream: stream)
/// let task = broadcaster.attach(HLSSink(stream))   // until the broadcaster closes
/// ```
///
/// Like every sink it starts at a keyframe and, should the packager fall behind, is cut back
/// to the next keyframe rather than slowing the viewers.
public struct HLSSink: LiveSink {
    /// The stream the frames go to.
    public let stream: HLSLiveStream

    /// A sink appending to `stream`.
    ///
    /// - Parameter stream: the stream the frames go to (served by an ``HLSServer``).
    public init(_ stream: HLSLiveStream) {
        self.stream = stream
    }

    /// Appends the frames, each stamped with the system clock as it arrives, until they end or
    /// the task is cancelled, then finishes the stream.
    ///
    /// - Parameter frames: the broadcaster's frames from a keyframe on.
    /// - Throws: the packager's error for a frame it cannot take (the stream is still finished).
    public func consume(_ frames: LiveFrameStream) async throws {
        do {
            for await frame in frames { try stream.append(frame) }
        } catch {
            try? stream.finish()
            throw error
        }
        try stream.finish()
    }
}
