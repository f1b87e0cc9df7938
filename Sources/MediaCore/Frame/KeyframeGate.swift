/// The one rule for "wait for a keyframe": a consumer of compressed frames that starts, or that
/// lost a frame, takes nothing until the next keyframe (an H.264 IDR access unit, an H.265 IRAP
/// picture), because every frame before it refers to pictures it does not have.
///
/// Sans-I/O and codec-neutral (it reads only ``CompressedFrame/isKeyframe``, or the flag of any
/// frame type): what a joining viewer, a sink that fell behind, the RTMP queue after a drop, the
/// RTSP client after a loss and the decoder adaptors share, so each counts what it skipped the
/// same way.
///
/// ```swift
/// var gate = KeyframeGate()            // closed: the first frame taken is a keyframe
/// for frame in frames where gate.admit(frame) { decode(frame) }
/// gate.close()                         // a frame was lost: skip to the next keyframe
/// ```
public struct KeyframeGate: Sendable, Hashable {
    /// True while frames pass; false from ``close()`` (or the start) until a keyframe.
    public private(set) var isOpen: Bool
    /// The frames refused while the gate was closed, in all.
    public private(set) var skippedFrames = 0
    /// The times the gate was closed while open: each a skip to the next keyframe.
    public private(set) var closings = 0

    /// A gate, closed (the next keyframe opens it) unless `open`.
    ///
    /// - Parameter open: true for a consumer that may start anywhere (the frames are known to
    ///   start at a keyframe).
    public init(open: Bool = false) {
        isOpen = open
    }

    /// Whether a frame passes: every frame while the gate is open; while it is closed, a
    /// keyframe opens it (and passes), any other frame is refused and counted.
    ///
    /// - Parameter isKeyframe: the frame's keyframe flag.
    /// - Returns: true when the frame is to be taken.
    public mutating func admit(isKeyframe: Bool) -> Bool {
        if isKeyframe { isOpen = true }
        if !isOpen { skippedFrames += 1 }
        return isOpen
    }

    /// ``admit(isKeyframe:)`` for a ``CompressedFrame``: a video keyframe opens the gate
    /// (``CompressedFrame/isVideoKeyframe``); an audio frame passes only while it is open, so
    /// an output starts at a video keyframe with the audio after it. (A stream of audio alone
    /// needs a gate made open.)
    ///
    /// - Parameter frame: the frame.
    /// - Returns: true when the frame is to be taken.
    public mutating func admit(_ frame: CompressedFrame) -> Bool {
        admit(isKeyframe: frame.isVideoKeyframe)
    }

    /// Refuses every frame up to the next keyframe (a frame was dropped or lost); counted in
    /// ``closings`` when the gate was open.
    public mutating func close() {
        if isOpen { closings += 1 }
        isOpen = false
    }

    /// Counts `count` frames as skipped without offering them (frames dropped before they
    /// reached the gate, such as a queue cut back to the next keyframe).
    ///
    /// - Parameter count: the frames dropped.
    public mutating func countSkipped(_ count: Int) {
        skippedFrames += count
    }
}
