import H264
import HEVC
import MediaContainers
import RTP

/// Where a ``Relay`` takes its stream from, as ``LiveFrame``s of either codec: a camera played with
/// ``RTSPClient``, a publisher recording to an ``RTSPServer`` record path (``RTSPPublisher``),
/// an Annex-B file played at its frame rate (``AnnexBFilePlayer``), an RTMP stream played with
/// ``RTMPPlayer``, or an RTMP publisher to an ``RTMPIngestServer`` (``RTMPIncomingStream``).
///
/// The access units keep their bytes (AVCC) and their timing: a camera's frames carry the
/// client's presentation time, a publisher's their RTP timestamps as a time since the first
/// (unwrapped across 2³²), a file's their place at its frame rate, an RTMP stream's their
/// decoding time and DTS + composition time (milliseconds, the format from the AVC sequence
/// header). Access units before the
/// first format (SPS and PPS, from the SDP or in band) is known are dropped: nobody could decode
/// them. An H.265 camera (the SDP's `H265` rtpmap) and an H.265 file give H.265 frames, their
/// format the `hvcC` of the SDP's `sprop-vps/sps/pps` and of the parameter sets in band
/// (`HEVCFormatTracker`), their keyframes the IRAP pictures, and so does an H.265 publisher
/// (its ANNOUNCE's `H265` rtpmap); an H.265 RTMP stream (Enhanced RTMP
/// `hvc1`) gives H.265 frames in the format of its last hvcC sequence header. Losses and
/// diagnostics are not frames; the source's own statistics count them.
///
/// The sequence ends when the source does (the camera closed, the publisher left, the file
/// ended without looping), and when the task iterating it is cancelled.
public struct RelaySource: AsyncSequence, Sendable {
    private enum Kind: Sendable {
        case camera(RTSPClient)
        case publisher(RTSPPublisher)
        case file(AnnexBFilePlayer)
        case rtmp(AsyncStream<FLVReader.Event>)
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

    /// The frames of an RTMP stream played from a server.
    ///
    /// - Parameter player: the playing player; ``RTMPPlayer/stop()`` tears it down.
    public static func rtmp(_ player: RTMPPlayer) -> RelaySource { RelaySource(kind: .rtmp(player.events)) }

    /// The frames of an RTMP publisher to an ``RTMPIngestServer``.
    ///
    /// - Parameter publisher: the publishing stream.
    public static func rtmp(_ publisher: RTMPIncomingStream) -> RelaySource { RelaySource(kind: .rtmp(publisher.events)) }

    /// The frames, as they come.
    public func makeAsyncIterator() -> Iterator {
        switch kind {
        case .camera(let client): Iterator(.camera(client.makeAsyncIterator()), format: try? client.sessionDescription.videoFormat())
        case .publisher(let publisher): Iterator(.publisher(publisher.makeAsyncIterator(), RTPTimeline()), format: try? publisher.sessionDescription.videoFormat())
        case .file(let player): Iterator(.file(player.makeAsyncIterator()), format: nil)
        case .rtmp(let events): Iterator(.rtmp(events.makeAsyncIterator()), format: nil)
        }
    }

    /// Turns the source's events into frames.
    public struct Iterator: AsyncIteratorProtocol {
        fileprivate enum Events {
            case camera(AsyncStream<RTSPClient.Event>.AsyncIterator)
            case publisher(AsyncStream<RTSPPublisher.Event>.AsyncIterator, RTPTimeline)
            case file(AnnexBFilePlayer.Iterator)
            case rtmp(AsyncStream<FLVReader.Event>.AsyncIterator)
        }

        private var events: Events
        /// The format of the frames (the SDP's, then the latest in band).
        private var format: VideoFormatDescription?
        /// The `hvcC` of an H.265 camera's stream, as its parameter sets come.
        private var hevc: HEVCFormatTracker

        fileprivate init(_ events: Events, format: VideoFormatDescription?) {
            self.events = events
            self.format = format
            hevc = HEVCFormatTracker(configuration: format?.hevc)
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
                case .camera(var client):
                    let event = await client.next()
                    events = .camera(client)
                    switch event {
                    case nil: return nil
                    case .accessUnit(let received, let presentationTime):
                        if let frame = frame(received.accessUnit, at: presentationTime) { return frame }
                    case .formatChange(let changed): format = .h264(changed)
                    case .hevcAccessUnit(let received, let presentationTime):
                        let unit = received.accessUnit
                        guard unit.hasPicture, let record = hevc.take(unit) else { continue }
                        return LiveFrame(avcc: unit.data, format: .hevc(record), isKeyframe: unit.isIRAP, presentationTime: presentationTime)
                    case .loss, .diagnostic, .disconnected, .reconnected, .resumed: continue
                    }
                case .rtmp(var flv):
                    let event = await flv.next()
                    events = .rtmp(flv)
                    switch event {
                    case nil: return nil
                    case .formatChanged(let changed)?: format = changed
                    case .frame(let received)?:
                        // The reader hands out frames only in a format (none before the first sequence header).
                        format = received.format
                        return LiveFrame(avcc: received.data, format: received.format, isKeyframe: received.isKeyframe,
                                         presentationTime: received.frame.presentationTime, decodeTime: received.frame.decodeTime)
                    case .endOfSequence?, .skippedTag?, .warning?: continue
                    }
                case .publisher(var publisher, var timeline):
                    let event = await publisher.next()
                    guard let event else { return nil }
                    defer { events = .publisher(publisher, timeline) }
                    switch event {
                    case .accessUnit(let received):
                        if let frame = frame(received.accessUnit, at: timeline.time(of: received.timestamp)) { return frame }
                    case .hevcAccessUnit(let received):
                        let time = timeline.time(of: received.timestamp), unit = received.accessUnit
                        guard unit.hasPicture, let record = hevc.take(unit) else { continue }
                        return LiveFrame(avcc: unit.data, format: .hevc(record), isKeyframe: unit.isIRAP, presentationTime: time)
                    case .loss, .keyframeRequest, .diagnostic: continue
                    }
                }
            }
        }

        /// `unit` as a frame, in its own format or the last one known; nil without either, or
        /// without a picture.
        private mutating func frame(_ unit: AccessUnit, at time: Duration, decodedAt decodeTime: Duration? = nil) -> LiveFrame? {
            if let own = unit.formatDescription { format = .h264(own) }
            guard unit.hasPicture, let format else { return nil }
            return LiveFrame(avcc: unit.data, format: format, isKeyframe: unit.isIDR, presentationTime: time, decodeTime: decodeTime)
        }
    }
}
