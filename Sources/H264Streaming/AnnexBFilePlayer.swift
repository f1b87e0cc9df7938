import Foundation
import H264

/// An Annex-B H.264 file played as a live source: its access units as ``LiveFrame``s, each
/// handed out when it is due at the file's frame rate — the way a ``Relay`` simulates a camera
/// (`h264 relay FILE`), and a way to test a player against a stream that has real GOPs.
///
/// The bytes are read in 1 MiB chunks into an `AccessUnitReceiver` (so the file starts at its
/// first IDR with its SPS and PPS, and access units whose parameter sets are missing are
/// skipped). The frame rate is the SPS's VUI timing, else ``framesPerSecond``, else 30; frame
/// *i* (in decoding order) is due *i* frame intervals after the first (``FrameSchedule``), its
/// ``LiveFrame/decodeTime`` is *i* intervals, and its ``LiveFrame/presentationTime`` is its
/// place in presentation order (`PresentationOrder`: a B-frame stream's pictures in the order
/// of their picture order counts, shifted by the SPS's reorder depth, which the player reads
/// ahead) times the interval, across loops too. With
/// ``loops``, the file starts again from the top when it ends (as long as it had a frame).
///
/// ```swift
/// for try await frame in AnnexBFilePlayer(path: "camera.264", loops: true) {
///     broadcaster.broadcast(frame)
/// }
/// ```
///
/// Cancelling the task that iterates ends the sequence at once (nil), as an `AsyncStream` does.
public struct AnnexBFilePlayer: AsyncSequence, Sendable {
    /// The file's path.
    public let path: String
    /// The frame rate when the SPS signals none; nil: 30.
    public let framesPerSecond: Double?
    /// True: start again from the top at the end of the file, forever.
    public let loops: Bool

    /// A player of the file at `path`.
    ///
    /// - Parameters:
    ///   - path: the Annex-B file.
    ///   - framesPerSecond: the frame rate when the SPS's VUI has no timing; nil: 30.
    ///   - loops: start again from the top at the end, forever.
    public init(path: String, framesPerSecond: Double? = nil, loops: Bool = false) {
        self.path = path
        self.framesPerSecond = framesPerSecond
        self.loops = loops
    }

    /// The frames, each when it is due.
    public func makeAsyncIterator() -> Iterator { Iterator(player: self) }

    /// Reads the file and paces its access units.
    public struct Iterator: AsyncIteratorProtocol {
        private let player: AnnexBFilePlayer
        private var handle: FileHandle?
        private var receiver = AccessUnitReceiver()
        private var order = PresentationOrder()
        private var ready: [PresentationOrder.Placed] = []
        private var atEnd = false
        private var framesThisPass = 0
        private var schedule: FrameSchedule?

        init(player: AnnexBFilePlayer) { self.player = player }

        /// The next frame once it is due; nil at the end of the file (without ``AnnexBFilePlayer/loops``)
        /// or when the task is cancelled.
        ///
        /// - Throws: the error of opening or reading the file.
        public mutating func next() async throws -> LiveFrame? {
            guard let placed = try nextAccessUnit(), let format = placed.accessUnit.formatDescription else { return nil }
            let unit = placed.accessUnit
            if schedule == nil {
                let rate = format.sequenceParameterSet?.frameRate ?? player.framesPerSecond ?? 30
                schedule = FrameSchedule(interval: .seconds(1) / Swift.max(rate, 0.001), start: .now)
            }
            let deadline = schedule!.deadline
            if ContinuousClock.now < deadline { try? await Task.sleep(until: deadline, tolerance: .microseconds(500), clock: .continuous) }
            if Task.isCancelled { return nil }
            schedule!.advance(now: .now)
            return LiveFrame(avcc: unit.data, formatDescription: format, isKeyframe: unit.isIDR,
                             presentationTime: schedule!.interval * placed.presentationIndex,
                             decodeTime: schedule!.interval * placed.decodeIndex)
        }

        /// The next access unit holding a picture, placed in presentation order, reading (and
        /// with `loops` reopening) the file as needed.
        private mutating func nextAccessUnit() throws -> PresentationOrder.Placed? {
            while ready.isEmpty {
                if atEnd {
                    guard player.loops, framesThisPass > 0 else { return nil }
                    atEnd = false
                    framesThisPass = 0
                }
                if handle == nil { handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: player.path)) }
                let chunk = try handle!.read(upToCount: 1 << 20) ?? Data()
                let events: [AccessUnitReceiver.Event]
                if chunk.isEmpty {
                    try handle?.close()
                    handle = nil
                    atEnd = true
                    events = receiver.finish()
                } else {
                    events = receiver.receive(chunk)
                }
                for case .accessUnit(let unit) in events where unit.hasPicture && unit.formatDescription != nil {
                    ready += order.append(unit)
                    framesThisPass += 1
                }
                if atEnd { ready += order.finish() }
            }
            return ready.removeFirst()
        }
    }
}
