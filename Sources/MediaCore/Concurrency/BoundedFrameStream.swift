/// An asynchronous sequence of frames that holds at most a fixed number of them for its
/// consumer and never hands out a frame whose references it dropped: the `frames` of
/// `EncoderSession` and `DecoderSession`.
///
/// ## The policy
/// The stream is made with an ``OutputBufferingPolicy``; its `limit` is the capacity, in frames.
/// When a frame arrives and `limit` frames are already waiting:
/// - ``OutputBufferingPolicy/waitingForConsumer(_:)`` suspends the producer — the session's
///   queue waits until the consumer has read a frame, so nothing is dropped; the session's
///   queue then fills, which the producer of the session meets in
///   `waitForQueuedFrames(downTo:)` and its async twin (back-pressure all the way up).
/// - ``OutputBufferingPolicy/keepingOldest(_:)`` drops the new frame and, in a stream of
///   compressed frames, every frame after it up to the next keyframe that finds room.
/// - ``OutputBufferingPolicy/keepingNewest(_:)`` drops the oldest waiting frame and, in a
///   stream of compressed frames, every waiting frame after it up to the next waiting keyframe
///   (the oldest group of pictures); when no keyframe waits, the new frame is dropped too,
///   with every frame after it up to the next keyframe.
///
/// In a stream of compressed frames (one made with a keyframe test, as `EncoderSession.frames`
/// is) a drop therefore always runs up to a keyframe: the consumer reads a run of frames, then,
/// after a gap, a keyframe — never a frame that refers to one it did not get. In a stream of
/// decoded frames every frame stands alone, and a drop is one frame.
///
/// Every dropped frame is counted in ``droppedFrameCount`` (the session's `droppedFrameCount`
/// reads the same number): a consumer that sees the count grow knows it skipped to a keyframe.
///
/// ## Ending
/// The stream finishes when its producer ends it (the session is invalidated): the frames
/// waiting are still read, then iteration ends. When the task iterating it is cancelled, the
/// stream ends for good: the waiting frames are released and later frames are dropped (not
/// counted), so a cancelled consumer never stalls a producer that waits for it.
///
/// One consumer at a time: concurrent iterators share the frames (each frame goes to one).
/// The counterpart of `AsyncStream`, which drops one element at a time and so breaks a group
/// of pictures in two.
public struct BoundedFrameStream<Frame: Sendable>: AsyncSequence, Sendable {
    /// The stream's elements: frames, in the order the producer gave them.
    public typealias Element = Frame
    /// The stream never throws.
    public typealias Failure = Never

    let storage: BoundedFrameStorage<Frame>

    /// Reads the frames of a ``BoundedFrameStream``.
    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        let storage: BoundedFrameStorage<Frame>

        /// The next frame, waiting for one; nil once the stream ended (or the task was cancelled).
        public mutating func next() async -> Frame? {
            await storage.next()
        }

        /// The next frame, waiting for one; nil once the stream ended (or the task was cancelled).
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Frame? {
            await storage.next()
        }
    }

    /// An iterator over the frames.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(storage: storage)
    }

    /// How many frames the stream has dropped because its buffer was full.
    public var droppedFrameCount: Int { storage.droppedFrameCount }

    /// How many frames wait for the consumer (at most the policy's `limit`).
    package var waitingCount: Int { storage.waitingCount }

    /// The policy the stream was made with (its `limit` is the capacity in frames).
    public var policy: OutputBufferingPolicy { storage.policy }

    /// A stream and the producer's handle to it.
    ///
    /// - Parameters:
    ///   - policy: the capacity and what happens when it is reached.
    ///   - isKeyframe: for compressed frames, which frames a decoder can start from (a drop
    ///     runs up to one); nil for frames that stand alone (decoded pictures).
    package static func make(policy: OutputBufferingPolicy,
                             isKeyframe: (@Sendable (Frame) -> Bool)?) -> (stream: Self, producer: Producer) {
        let storage = BoundedFrameStorage(policy: policy, isKeyframe: isKeyframe)
        return (Self(storage: storage), Producer(storage: storage))
    }

    /// The producer's side of a stream: ``yield(_:)`` and ``finish()``.
    package struct Producer: Sendable {
        let storage: BoundedFrameStorage<Frame>

        /// Offers `frame` to the stream under its policy (waiting for room with
        /// ``OutputBufferingPolicy/waitingForConsumer(_:)``).
        ///
        /// - Returns: how many frames this call dropped (0 when the frame went in); counted in
        ///   ``BoundedFrameStream/droppedFrameCount`` as well.
        @discardableResult
        package func yield(_ frame: Frame) -> Int { storage.yield(frame) }

        /// Ends the stream: the consumer reads the frames waiting, then iteration ends; later
        /// frames are ignored; a producer waiting for room returns. Idempotent.
        package func finish() { storage.finish() }
    }
}
