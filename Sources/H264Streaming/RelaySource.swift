import MediaContainers
import MediaCore
public import RTP
import Synchronization

/// Where a ``Relay`` takes its stream from, as ``LiveFrame``s of either codec: a camera played with
/// ``RTSPClient``, a publisher recording to an ``RTSPServer`` record path (``RTSPPublisher``),
/// an Annex-B file played at its frame rate (``AnnexBFilePlayer``), an MP4 file played by its
/// times (``MP4FilePlayer``), an RTMP stream played with
/// ``RTMPPlayer``, or an RTMP publisher to an ``RTMPIngestServer`` (``RTMPIncomingStream``).
///
/// Every source hands out the same `CompressedFrame`s, of either codec (H.264, H.265: the
/// SDP's or ANNOUNCE's `rtpmap`, an RTMP stream's legacy or Enhanced RTMP `hvc1` tags, the
/// file's NAL unit headers), so the relay never forks on the codec. The frames keep their bytes
/// (4-byte lengths), their format and their timing: a camera's frames carry the client's
/// presentation time, a publisher's their RTP timestamps as a time since the first (unwrapped
/// across 2³²), a file's their place at its frame rate, an RTMP stream's their decoding time
/// and DTS + composition time. Frames before the first format (parameter sets from the SDP, a
/// sequence header or in band) are not handed out by the sources: nobody could decode them.
/// Losses and diagnostics are not frames; the source's own statistics count them.
///
/// The sequence ends when the source does (the camera closed, the publisher left, the file
/// ended without looping), and when the task iterating it is cancelled.
public struct RelaySource: AsyncSequence, Sendable {
    private enum Kind: Sendable {
        case camera(RTSPClient)
        case publisher(RTSPPublisher)
        case file(AnnexBFilePlayer)
        case mp4(MP4FilePlayer)
        case rtmp(AsyncStream<FLVReader.Event>, RTMPAudioTrack)
    }

    private let kind: Kind

    /// The frames of a camera (or any RTSP server) the client plays.
    ///
    /// - Parameter client: the playing client; cancelling the iteration tears it down.
    public static func camera(_ client: RTSPClient) -> RelaySource { RelaySource(kind: .camera(client)) }

    /// The frames a publisher records (ANNOUNCE and RECORD to an ``RTSPServer`` record path).
    ///
    /// - Parameter publisher: the recording publisher.
    public static func publisher(_ publisher: RTSPPublisher) -> RelaySource { RelaySource(kind: .publisher(publisher)) }

    /// The frames of an Annex-B file, each when it is due at the file's frame rate.
    ///
    /// - Parameter player: the file, its fallback frame rate and whether it loops.
    public static func file(_ player: AnnexBFilePlayer) -> RelaySource { RelaySource(kind: .file(player)) }

    /// The frames of an MP4 file, video and audio, each when it is due by its decoding time.
    ///
    /// - Parameter player: the file and whether it loops.
    public static func file(_ player: MP4FilePlayer) -> RelaySource { RelaySource(kind: .mp4(player)) }

    /// Where the source's frames come from, for a task that reads them to run on
    /// (`Task(executorPreference:)`): a file's player's event loop (where they are paced), a
    /// camera's client's (where its packets are read: a frame then reaches the broadcaster in
    /// the turn that read it, with no hop to Swift's cooperative pool and back); nil for the
    /// other sources.
    public var executor: EventLoopExecutor? {
        switch kind {
        case .camera(let client): EventLoopExecutor(client.loop)
        case .file(let player): player.eventLoop.map(EventLoopExecutor.init)
        case .mp4(let player): player.eventLoop.map(EventLoopExecutor.init)
        default: nil
        }
    }

    /// The source's audio track as an RTSP server describes it (a camera's `m=audio` section),
    /// for ``RTSPServer/mount(_:broadcaster:format:audio:authentication:)`` before the first
    /// viewer asks (DESCRIBE); nil without audio, and for an Annex-B file. An MP4 file's is its
    /// first audio track (AAC and Opus on payload type 97).
    /// The audio frames themselves come out of the sequence as ``LiveFrame``s of the audio track.
    ///
    /// An RTMP stream has no description ahead of its frames: its track is the format of the
    /// first audio frame the iterator handed out (AAC as `mpeg4-generic`, payload type 97;
    /// G.711 on its static payload type), nil until then. FFmpeg and OBS send the AAC sequence
    /// header and the first audio frame before the first video keyframe, so a relay that mounts
    /// at its first video format (``Relay/run(_:onFormat:)``) mounts with audio; when the audio
    /// comes only after that mount, the stream stays video-only (until it is mounted again).
    public var audioMedia: AudioMediaDescription? {
        switch kind {
        case .camera(let client): client.audioMedia
        case .publisher(let publisher): publisher.audioMedia
        case .rtmp(_, let track): track.media
        case .mp4(let player): player.audioFormat.map(RTMPAudioTrack.media)
        case .file: nil
        }
    }

    /// The frames of an RTMP stream played from a server.
    ///
    /// - Parameter player: the playing player; ``RTMPPlayer/stop()`` tears it down.
    public static func rtmp(_ player: RTMPPlayer) -> RelaySource { RelaySource(kind: .rtmp(player.events, RTMPAudioTrack())) }

    /// The frames of an RTMP publisher to an ``RTMPIngestServer``.
    ///
    /// - Parameter publisher: the publishing stream.
    public static func rtmp(_ publisher: RTMPIncomingStream) -> RelaySource { RelaySource(kind: .rtmp(publisher.events, RTMPAudioTrack())) }

    /// The frames, as they come.
    public func makeAsyncIterator() -> Iterator {
        switch kind {
        case .camera(let client): Iterator(.camera(client.makeAsyncIterator()))
        case .publisher(let publisher): Iterator(.publisher(publisher.makeAsyncIterator()))
        case .file(let player): Iterator(.file(player.makeAsyncIterator()))
        case .mp4(let player): Iterator(.mp4(player.makeAsyncIterator()))
        case .rtmp(let events, let track): Iterator(.rtmp(events.makeAsyncIterator(), track))
        }
    }

    /// Turns the source's events into frames.
    public struct Iterator: AsyncIteratorProtocol {
        fileprivate enum Events {
            case camera(AsyncStream<RTSPClient.Event>.AsyncIterator)
            case publisher(AsyncStream<RTSPPublisher.Event>.AsyncIterator)
            case file(AnnexBFilePlayer.Iterator)
            case mp4(MP4FilePlayer.Iterator)
            case rtmp(AsyncStream<FLVReader.Event>.AsyncIterator, RTMPAudioTrack)
        }

        private var events: Events

        fileprivate init(_ events: Events) {
            self.events = events
        }

        /// The next frame; nil when the source ended or the task was cancelled.
        ///
        /// - Throws: a file's read error.
        public mutating func next() async throws -> LiveFrame? {
            while true {
                switch events {
                case .file(var player):
                    defer { events = .file(player) }
                    return try await player.next()
                case .mp4(var player):
                    defer { events = .mp4(player) }
                    return try await player.next()
                case .camera(var client):
                    let event = await client.next()
                    events = .camera(client)
                    switch event {
                    case nil: return nil
                    case .frame(let received): if let frame = LiveFrame(received.frame) { return frame }
                    case .formatChanged: continue
                    case .loss, .diagnostic, .disconnected, .reconnected, .resumed: continue
                    }
                case .rtmp(var flv, let track):
                    let event = await flv.next()
                    events = .rtmp(flv, track)
                    switch event {
                    case nil: return nil
                    case .frame(let received)?:
                        if let audio = received.audioFormat { track.saw(audio) }
                        if let frame = LiveFrame(received.frame) { return frame }
                    case .formatChanged?, .endOfSequence?, .skippedTag?, .warning?: continue
                    }
                case .publisher(var publisher):
                    let event = await publisher.next()
                    guard let event else { return nil }
                    defer { events = .publisher(publisher) }
                    switch event {
                    case .frame(let received): if let frame = LiveFrame(received.frame) { return frame }
                    case .formatChanged: continue
                    case .loss, .keyframeRequest, .diagnostic: continue
                    }
                }
            }
        }
    }
}

/// The audio track of an RTMP ``RelaySource``: the format of the first audio frame its iterator
/// handed out, shared with ``RelaySource/audioMedia``.
private final class RTMPAudioTrack: Sendable {
    private let described = Mutex<AudioMediaDescription?>(nil)

    /// The track's description; nil before the first audio frame.
    var media: AudioMediaDescription? { described.withLock { $0 } }

    /// Keeps the first audio frame's format; later ones do not change the track.
    func saw(_ format: AudioFormatDescription) {
        described.withLock { media in
            guard media == nil else { return }
            media = Self.media(format)
        }
    }

    /// How a relay describes an audio track it has only the format of: G.711 on its static
    /// payload type, AAC and Opus on 97.
    static func media(_ format: AudioFormatDescription) -> AudioMediaDescription {
        let payloadType: UInt8 = switch format.codec {
        case .pcmu: 0
        case .pcma: 8
        case .aac, .opus: 97
        }
        return AudioMediaDescription(format: format, payloadType: payloadType)
    }
}
