import Foundation
public import MediaContainers
import NIOCore
public import MediaCore

/// One live HLS / Low-Latency HLS stream: MediaContainers' sans-I/O `HLSPackager` fed with the
/// stream's frames as they come, and the requests for its playlist and resources that wait for
/// what is not there yet (a blocking playlist reload, `?_HLS_msn=M&_HLS_part=P`, or the part a
/// preload hint names), each answered as soon as an append makes it available.
///
/// ```swift
/// let stream = HLSLiveStream()
/// server.mount(path: "/live", stream: stream)         // http://HOST:PORT/live/index.m3u8
/// let task = broadcaster.attach(HLSSink(stream))      // appends the broadcaster's frames
/// ```
///
/// Bounded: at most ``Limits/maximumWaiters`` requests wait at a time (the next get
/// ``HLSLiveAnswer/unavailable(_:)`` at once), and none waits longer than
/// ``Limits/waitLimit`` (three target segment durations unless set, and more when the first
/// playlist waits for more segments). A request whose task is
/// cancelled — the server cancels it when its client hangs up — stops waiting at once.
public final class HLSLiveStream: Sendable {
    /// How many requests may wait, and for how long.
    public struct Limits: Sendable, Hashable {
        /// The most requests that wait at once (playlist reloads and resources together).
        public var maximumWaiters: Int
        /// The longest a request waits; nil: three times the packager's target segment duration.
        public var waitLimit: Duration?

        /// At most `maximumWaiters` waiting requests, none waiting longer than `waitLimit`.
        ///
        /// - Parameters:
        ///   - maximumWaiters: the most requests that wait at once.
        ///   - waitLimit: the longest a request waits; nil: three target segment durations, or the
        ///     packager's `minimumSegments` + 2 when that is more (the first playlist waits for them).
        public init(maximumWaiters: Int = 1_000, waitLimit: Duration? = nil) {
            self.maximumWaiters = maximumWaiters
            self.waitLimit = waitLimit
        }
    }

    /// Why a waiting request stopped waiting.
    private enum Wake {
        /// Something new can be served (or the stream ended): ask the packager again.
        case changed
        /// The wait limit passed.
        case timedOut
        /// The request's task was cancelled.
        case cancelled
        /// Too many requests wait already.
        case full
    }

    /// One waiting request: registered, then waiting, or resolved before it began to wait.
    private enum Slot {
        case registered
        case waiting(CheckedContinuation<Wake, Never>)
        case resolved(Wake)
    }

    private struct State {
        var packager: HLSPackager
        /// Counts the appends that made something new (and the finish): a request that asked
        /// the packager at one generation waits only while it is still the current one.
        var generation = 0
        var finished = false
        var slots: [Int: Slot] = [:]
        var nextSlot = 0
        /// The files written, each made once as the buffer every viewer is sent.
        var files = WrittenFiles()
    }

    /// Buffers of written files by name, the oldest dropped past 64 MiB (a name is never reused:
    /// a dropped one is made again when asked for).
    struct WrittenFiles {
        static let byteLimit = 64 << 20
        var buffers: [String: (buffer: ByteBuffer, contentType: String, isImmutable: Bool)] = [:]
        var order: [String] = []
        var bytes = 0

        mutating func insert(_ name: String, _ file: (buffer: ByteBuffer, contentType: String, isImmutable: Bool)) {
            buffers[name] = file
            order.append(name)
            bytes += file.buffer.readableBytes
            while bytes > Self.byteLimit, !order.isEmpty {
                if let dropped = buffers.removeValue(forKey: order.removeFirst()) { bytes -= dropped.buffer.readableBytes }
            }
        }
    }

    /// The packager's configuration (segment and part durations, window).
    public let configuration: HLSPackager.Configuration
    /// The bounds of the waiting requests.
    public let limits: Limits
    private let state: Locked<State>

    /// A stream packaged with `configuration`, nothing appended yet.
    ///
    /// - Parameters:
    ///   - configuration: the packager's segment and part durations and playlist window.
    ///   - limits: how many requests may wait, and for how long.
    public init(_ configuration: HLSPackager.Configuration = .init(), limits: Limits = .init()) {
        self.configuration = configuration
        self.limits = limits
        state = Locked(State(packager: HLSPackager(configuration)))
    }

    /// The longest a request waits.
    private var waitLimit: Duration {
        limits.waitLimit ?? configuration.segmentDuration * max(3, configuration.minimumSegments + 2)
    }

    /// How many requests wait now (for a playlist reload or a resource).
    public var waitingRequests: Int { state.withLock { $0.slots.count } }

    /// Appends a frame of the stream (see ``append(_:wallClock:)-(CompressedFrame,_)``), stamped with the
    /// system clock's time now.
    ///
    /// - Parameter frame: the frame, video or audio, in the order the source made them.
    /// - Returns: true when something new can be served (the waiting requests were woken).
    /// - Throws: the packager's error for a frame it cannot take.
    @discardableResult
    public func append(_ frame: LiveFrame) throws(MediaError) -> Bool {
        try append(frame.compressedFrame)
    }

    /// Appends a frame of the stream stamped with `wallClock` (the time since 1970 it arrived,
    /// for `EXT-X-PROGRAM-DATE-TIME`; nil: the system clock's now) and wakes the waiting
    /// requests when it made something new to serve.
    ///
    /// - Parameters:
    ///   - frame: the frame, video (4-byte-length NAL units) or audio, in the source's order.
    ///   - wallClock: when it arrived, since 1970; nil: now.
    /// - Returns: true when something new can be served (the waiting requests were woken).
    /// - Throws: the packager's error for a frame it cannot take.
    @discardableResult
    public func append(_ frame: CompressedFrame, wallClock: Duration? = nil) throws(MediaError) -> Bool {
        let now = wallClock ?? Self.systemTime()
        let (made, woken) = try state.withLock { state throws(MediaError) -> (Bool, [CheckedContinuation<Wake, Never>]) in
            guard !state.finished else { return (false, []) }
            guard try state.packager.append(frame, wallClock: now) else { return (false, []) }
            return (true, Self.advance(&state))
        }
        for continuation in woken { continuation.resume(returning: .changed) }
        return made
    }

    /// Ends the stream: the packager closes its last part and segment and the playlist gets
    /// `EXT-X-ENDLIST`; the waiting requests are answered with what there is. Later appends are
    /// ignored; finishing again does nothing.
    ///
    /// - Throws: the packager's error closing the last segment.
    public func finish() throws(MediaError) {
        var failure: MediaError?
        let woken = state.withLock { state -> [CheckedContinuation<Wake, Never>] in
            guard !state.finished else { return [] }
            state.finished = true
            do throws(MediaError) { try state.packager.finish() } catch { failure = error }
            return Self.advance(&state)
        }
        for continuation in woken { continuation.resume(returning: .changed) }
        if let failure { throw failure }
    }

    /// The answer to `GET index.m3u8?QUERY` (`_HLS_msn`, `_HLS_part`, `_HLS_skip`): the playlist
    /// once it holds the part or segment asked for, waiting for it if need be (at most
    /// ``Limits/waitLimit``).
    ///
    /// - Parameter request: the query's blocking-reload and delta-update items.
    /// - Returns: the playlist; ``HLSLiveAnswer/badRequest(_:)`` for a malformed query or one too far
    ///   ahead; ``HLSLiveAnswer/unavailable(_:)`` when too many wait or the wait limit passed.
    public func playlist(for request: HLSPlaylistRequest) async -> HLSLiveAnswer {
        await answer { state in
            switch state.packager.playlist(for: request) {
            case .playlist(let text): return .playlist(text)
            case .badRequest(let reason): return .badRequest(reason)
            case .wait:
                // An ended stream has no more to wait for (the packager answers it at once).
                return state.finished ? .notFound : nil
            }
        }
    }

    /// The answer to `GET NAME` for a resource the playlist names (`init-N.mp4`, `seg-N.m4s`,
    /// `part-N-I.m4s`): its bytes once it is written, waiting for one that is about to be (the
    /// preload hint's part; at most ``Limits/waitLimit``).
    ///
    /// - Parameter name: the resource's name in the playlist.
    /// - Returns: the resource; ``HLSLiveAnswer/notFound`` when the stream has no such one;
    ///   ``HLSLiveAnswer/unavailable(_:)`` when too many wait or the wait limit passed.
    public func resource(named name: String) async -> HLSLiveAnswer {
        await answer { state in
            switch state.packager.resource(named: name) {
            case .available(let resource): return .resource(resource)
            case .missing: return .notFound
            case .upcoming: return state.finished ? .notFound : nil
            }
        }
    }

    /// A file of the stream that is written now, as the buffer every viewer is sent (made at the
    /// first request, kept while the cache holds it); nil when it is not written (yet).
    ///
    /// - Parameter name: the file's name in the playlist.
    func writtenFile(named name: String) -> (buffer: ByteBuffer, contentType: String, isImmutable: Bool)? {
        state.withLock { state in
            if let file = state.files.buffers[name] { return file }
            guard case .available(let resource) = state.packager.resource(named: name) else { return nil }
            let file = (buffer: ByteBuffer(bytes: resource.bytes), contentType: resource.contentType, isImmutable: resource.isImmutable)
            state.files.insert(name, file)
            return file
        }
    }

    /// Asks `decide` (under the lock) until it answers, waiting for the next change between asks.
    private func answer(_ decide: (inout State) -> HLSLiveAnswer?) async -> HLSLiveAnswer {
        let deadline = ContinuousClock.now + waitLimit
        while true {
            let (answer, generation) = state.withLock { state in (decide(&state), state.generation) }
            if let answer { return answer }
            switch await change(after: generation, until: deadline) {
            case .changed: continue
            case .timedOut: return .unavailable("not there within \(waitLimit)")
            case .cancelled: return .unavailable("the request was cancelled")
            case .full: return .unavailable("too many requests wait (\(limits.maximumWaiters))")
            }
        }
    }

    /// Waits until the stream moves past `generation`, `deadline` passes or the task is cancelled.
    private func change(after generation: Int, until deadline: ContinuousClock.Instant) async -> Wake {
        let slot = state.withLock { state -> Int? in
            guard state.slots.count < limits.maximumWaiters else { return nil }
            defer { state.nextSlot += 1 }
            state.slots[state.nextSlot] = .registered
            return state.nextSlot
        }
        guard let slot else { return .full }
        return await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                try? await Task.sleep(until: deadline)
                resolve(slot, .timedOut)
            }
            let wake = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let ready = state.withLock { state -> Wake? in
                        if case .resolved(let wake) = state.slots[slot] {
                            state.slots[slot] = nil
                            return wake
                        }
                        guard state.generation == generation else {
                            state.slots[slot] = nil
                            return .changed
                        }
                        state.slots[slot] = .waiting(continuation)
                        return nil
                    }
                    if let ready { continuation.resume(returning: ready) }
                }
            } onCancel: { [self] in
                resolve(slot, .cancelled)
            }
            group.cancelAll()
            return wake
        }
    }

    /// Ends the wait of `slot` with `wake` (or marks it, when it has not begun to wait).
    private func resolve(_ slot: Int, _ wake: Wake) {
        let continuation = state.withLock { state -> CheckedContinuation<Wake, Never>? in
            switch state.slots[slot] {
            case .registered:
                state.slots[slot] = .resolved(wake)
                return nil
            case .waiting(let continuation):
                state.slots[slot] = nil
                return continuation
            case .resolved, nil:
                return nil
            }
        }
        continuation?.resume(returning: wake)
    }

    /// Moves `state` to its next generation and takes the continuations of every waiting request.
    private static func advance(_ state: inout State) -> [CheckedContinuation<Wake, Never>] {
        state.generation += 1
        var woken: [CheckedContinuation<Wake, Never>] = []
        state.slots = state.slots.filter { _, entry in
            guard case .waiting(let continuation) = entry else { return true }
            woken.append(continuation)
            return false
        }
        return woken
    }

    /// The system clock's time since 1970.
    private static func systemTime() -> Duration {
        let seconds = Date().timeIntervalSince1970
        return .nanoseconds(Int64(seconds * 1e9))
    }
}
