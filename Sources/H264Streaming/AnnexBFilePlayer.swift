import Foundation
import H264
import HEVC
public import NIOCore

/// An Annex-B H.264 or H.265 file played as a live source: its access units as ``LiveFrame``s,
/// each handed out when it is due at the file's frame rate — the way a ``Relay`` simulates a
/// camera (`h264 relay FILE`), and a way to test a player against a stream that has real GOPs.
///
/// The codec is told from the first chunk's NAL unit headers (`AnnexB.codec(ofStreamBeginning:isComplete:nalUnitLimit:)`).
/// The bytes are read in 64 KiB chunks into an `AccessUnitReceiver` (so the file starts at its
/// first IDR with its SPS and PPS, and access units whose parameter sets are missing are
/// skipped); an H.265 file's into the one H.265 stream receiver (`HEVCAccessUnitAssembler`'s
/// access units from the first IRAP picture whose SPS has come), its frames in the `hvcC` of
/// its parameter sets (`HEVCFormatTracker`), its keyframes the IRAP pictures, its frame rate the
/// SPS's VUI timing else the VPS's. The frame rate is the SPS's VUI timing, else ``framesPerSecond``, else 30; frame
/// *i* (in decoding order) is due *i* frame intervals after the first (``FrameSchedule``), its
/// ``LiveFrame/decodeTime`` is *i* intervals, and its ``LiveFrame/presentationTime`` is its
/// place in presentation order (`PresentationOrder`: a B-frame stream's pictures in the order
/// of their picture order counts, shifted by the SPS's reorder depth, which the player reads
/// ahead; for H.265 `PicOrderCntVal` and `sps_max_num_reorder_pics`) times the interval,
/// across loops too. With
/// ``loops``, the file starts again from the top when it ends (as long as it had a frame).
///
/// ```swift
/// for try await frame in AnnexBFilePlayer(path: "camera.264", loops: true) {
///     broadcaster.broadcast(frame)
/// }
/// ```
///
/// Each frame waits for its deadline on a ``Doorbell`` (an event loop's scheduled task, the
/// pacer of ``FramePacer`` too), not in a sleeping task. Cancelling the task that iterates ends
/// the sequence at once (nil), as an `AsyncStream` does.
public struct AnnexBFilePlayer: AsyncSequence, Sendable {
    /// The file's path.
    public let path: String
    /// The frame rate when the SPS signals none; nil: 30.
    public let framesPerSecond: Double?
    /// True: start again from the top at the end of the file, forever.
    public let loops: Bool
    /// Where the frames' deadlines are scheduled; nil: one of NIO's shared event loops.
    public let eventLoop: (any EventLoop)?

    /// A player of the file at `path`.
    ///
    /// - Parameters:
    ///   - path: the Annex-B file.
    ///   - framesPerSecond: the frame rate when the SPS's VUI has no timing; nil: 30.
    ///   - loops: start again from the top at the end, forever.
    ///   - eventLoop: where the frames' deadlines are scheduled (a server's own loop); nil: one
    ///     of NIO's shared event loops.
    public init(path: String, framesPerSecond: Double? = nil, loops: Bool = false, eventLoop: (any EventLoop)? = nil) {
        self.path = path
        self.framesPerSecond = framesPerSecond
        self.loops = loops
        self.eventLoop = eventLoop
    }

    /// The frames, each when it is due.
    public func makeAsyncIterator() -> Iterator { Iterator(player: self) }

    /// Reads the file and paces its access units.
    public struct Iterator: AsyncIteratorProtocol {
        /// An access unit with a picture, its format and its places in decoding and presentation order.
        private struct Placed {
            let frame: LiveFrame
            let decodeIndex: Int
            let presentationIndex: Int
        }

        private let player: AnnexBFilePlayer
        private var handle: FileHandle?
        /// The file's codec, told from its first chunk.
        private var codec: VideoCodec?
        private var receiver = AccessUnitReceiver()
        private var order = PresentationOrder()
        private var hevc = HEVCFileReading()
        private var ready: [Placed] = []
        /// The first of `ready` not handed out yet.
        private var readyHead = 0
        /// The bytes read from the file at a time.
        private static let chunkSize = 1 << 16
        private var atEnd = false
        private var framesThisPass = 0
        private var schedule: FrameSchedule?
        /// The timer each frame waits on (nobody rings it).
        private let timer: Doorbell

        init(player: AnnexBFilePlayer) {
            self.player = player
            timer = Doorbell(eventLoop: player.eventLoop)
        }

        /// The next frame once it is due; nil at the end of the file (without ``AnnexBFilePlayer/loops``)
        /// or when the task is cancelled.
        ///
        /// - Throws: the error of opening or reading the file.
        public mutating func next() async throws -> LiveFrame? {
            guard let placed = try nextAccessUnit() else { return nil }
            if schedule == nil {
                // The frame rate the first frame's format signals (read once: parsing the SPS per frame costs).
                let signalled = placed.frame.format?.h264 != nil ? placed.frame.format?.framesPerSecond : hevc.frameRate
                let rate = signalled ?? player.framesPerSecond ?? 30
                schedule = FrameSchedule(interval: .seconds(1) / Swift.max(rate, 0.001), start: .now)
            }
            let deadline = schedule!.deadline
            await timer.sleep(until: deadline)
            if Task.isCancelled { return nil }
            schedule!.advance(now: .now)
            var frame = placed.frame
            frame.presentationTime = schedule!.interval * placed.presentationIndex
            frame.decodeTime = schedule!.interval * placed.decodeIndex
            return frame
        }

        /// The H.264 access units `order` placed, as frames.
        private static func frames(_ placed: [PresentationOrder.Placed]) -> [Placed] {
            placed.compactMap { placed in
                let unit = placed.accessUnit
                guard let format = unit.formatDescription else { return nil }
                return Placed(frame: LiveFrame(avcc: unit.data, formatDescription: format, isKeyframe: unit.isIDR),
                              decodeIndex: placed.decodeIndex, presentationIndex: placed.presentationIndex)
            }
        }

        /// The H.265 access units placed, as frames.
        private static func frames(_ placed: [HEVCFileReading.Placed]) -> [Placed] {
            placed.map { placed in
                Placed(frame: LiveFrame(avcc: placed.unit.data, format: .hevc(placed.format), isKeyframe: placed.unit.isIRAP),
                       decodeIndex: placed.decodeIndex, presentationIndex: placed.presentationIndex)
            }
        }

        /// The next access unit holding a picture, placed in presentation order, reading (and
        /// with `loops` reopening) the file as needed.
        private mutating func nextAccessUnit() throws -> Placed? {
            while readyHead == ready.count {
                if atEnd {
                    guard player.loops, framesThisPass > 0 else { return nil }
                    atEnd = false
                    framesThisPass = 0
                }
                if handle == nil { handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: player.path)) }
                // Copied out of `Data` once, whole (its element-wise iteration cost more than the
                // parsing); 64 KiB at a time, so the buffers are reused rather than fresh pages.
                let chunk = [UInt8](try handle!.read(upToCount: Self.chunkSize) ?? Data())
                if codec == nil { codec = AnnexB.codec(ofStreamBeginning: chunk, isComplete: chunk.count < Self.chunkSize) }
                if chunk.isEmpty {
                    try handle?.close()
                    handle = nil
                    atEnd = true
                }
                if codec == .hevc {
                    let units = atEnd ? hevc.finish() : hevc.receive(chunk)
                    framesThisPass += units.count
                    ready += Self.frames(units)
                    continue
                }
                let events = atEnd ? receiver.finish() : receiver.receive(chunk)
                for case .accessUnit(let unit) in events where unit.hasPicture && unit.formatDescription != nil {
                    ready += Self.frames(order.append(unit))
                    framesThisPass += 1
                }
                if atEnd { ready += Self.frames(order.finish()) }
            }
            defer {
                readyHead += 1
                if readyHead == ready.count { ready.removeAll(keepingCapacity: true); readyHead = 0 }
            }
            return ready[readyHead]
        }
    }
}
