/// The frames since the last IDR, while they fit in the ``GOPKeeping`` limits: what a
/// ``Broadcaster`` hands a viewer who joins. Sans-I/O; the broadcaster guards it with its lock.
struct KeptGOP: Sendable {
    let limits: GOPKeeping
    private(set) var frames: [FanOutFrame] = []
    private(set) var byteCount = 0
    /// True while ``frames`` holds every frame since the last IDR (false before the first IDR,
    /// and from a GOP that outgrew the limits until the next IDR).
    private(set) var isWhole = false

    init(limits: GOPKeeping) { self.limits = limits }

    /// The frames a joining viewer starts with (an IDR first); nil when none are kept.
    var startingFrames: [FanOutFrame]? { isWhole && !frames.isEmpty ? frames : nil }

    /// Takes the next frame of the stream: an IDR starts a new GOP; a frame past the limits
    /// drops the GOP until the next IDR.
    mutating func append(_ frame: FanOutFrame) {
        if frame.frame.isKeyframe {
            frames.removeAll(keepingCapacity: true)
            byteCount = 0
            isWhole = true
        }
        guard isWhole else { return }
        let size = frame.frame.avcc.count + (frame.annexB?.readableBytes ?? 0) + (frame.rtp?.interleaved.readableBytes ?? 0)
        guard frames.count < limits.frameLimit, byteCount + size <= limits.byteLimit else {
            frames = []
            byteCount = 0
            isWhole = false
            return
        }
        frames.append(frame)
        byteCount += size
    }
}
