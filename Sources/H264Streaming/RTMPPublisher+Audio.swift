public import H264
import MediaContainers
import NIOCore
import RTMPMessages

extension RTMPPublisher {
    /// Sends one audio frame as an RTMP audio message (type 8, on chunk stream 4) whose payload
    /// is an FLV audio tag body: a raw AAC frame (`AF 01`, no ADTS header) after the AAC sequence
    /// header — sent before the first AAC frame, again when `format` differs from the last one
    /// sent, and after each reconnection — or G.711 samples (`SoundFormat` 7/8, 8 kHz).
    ///
    /// Timestamps share the video's origin: send both media on the same clock. While the
    /// connection cannot keep up (or is down), audio frames are dropped and counted
    /// (``Statistics/audioFramesDropped``).
    ///
    /// - Parameters:
    ///   - data: one raw AAC access unit, or G.711 samples.
    ///   - format: its format (AAC with its `AudioSpecificConfig` as magic cookie, `pcma`, `pcmu`).
    ///   - timestamp: when the frame's first sample plays, on the clock of the video frames.
    /// - Throws: ``RTMPError``: the connection's failure, or ``RTMPError/Code/invalidUse`` after
    ///   ``finish()``, for Opus (legacy FLV has no `SoundFormat` for it), G.711 at another rate
    ///   than 8 kHz or an AAC format without its configuration.
    public func send(audio data: [UInt8], format: AudioFormatDescription, timestamp: Duration) async throws {
        if loop.inEventLoop && state.withLock({ $0.offered == 0 }) {
            return try deliver(audio: data, format: format, timestamp: timestamp)
        }
        try await loop.submit { [self] in try deliver(audio: data, format: format, timestamp: timestamp) }.get()
    }

    /// Whether RTMP carries `format` in a legacy FLV audio tag: AAC with its configuration, or
    /// G.711 at 8 kHz (Opus needs converting first).
    public static func carries(_ format: AudioFormatDescription) -> Bool {
        switch format.codec {
        case .aac: !format.magicCookie.isEmpty
        case .pcma, .pcmu: format.sampleRate == 8_000
        case .opus: false
        }
    }

    /// Announces the audio track before its first frame: the AAC sequence header of `format` now
    /// (players then know the stream has audio before the first video keyframe, as YouTube's
    /// ingest wants), so a source whose audio starts after its first picture is still published
    /// as a stream with audio. Nothing for G.711, which has no sequence header.
    ///
    /// - Parameter format: the AAC format the audio frames will have.
    /// - Throws: ``RTMPError``: the connection's failure, or ``RTMPError/Code/invalidUse`` after
    ///   ``finish()`` or for an AAC format without its configuration.
    public func announceAudio(_ format: AudioFormatDescription) async throws {
        try await loop.submit { [self] in
            let url = self.url
            let (link, finished) = state.withLock { ($0.link, $0.finished) }
            if finished { throw RTMPError(.invalidUse, "\(url): announceAudio after finish") }
            let handler = link.handler.value
            if let failure = handler.failure { throw failure }
            let messages = try state.withLock { state throws(RTMPError) -> [RTMPMessage] in
                do throws(MediaError) {
                    return try state.audio.announcement(of: format, messageStreamId: link.messageStreamId, writable: handler.isWritable)
                } catch {
                    throw RTMPError(.invalidUse, "\(url): \(error)", underlying: error)
                }
            }
            if !messages.isEmpty { handler.write(messages, chunkStreamId: RTMPClientHandler.ChunkStream.audio) }
        }.get()
    }

    /// Writes one audio frame's messages (the AAC sequence header first when due), on the event
    /// loop; drops it while the connection is down or cannot keep up.
    func deliver(audio data: [UInt8], format: AudioFormatDescription, timestamp: Duration) throws {
        let url = self.url
        let (link, handler, writable) = try sendingLink()
        let messages = try state.withLock { state throws(RTMPError) -> [RTMPMessage] in
            do throws(MediaError) {
                let origin = state.timeline.origin(at: timestamp)
                return try state.audio.messages(data, format: format, milliseconds: RTMPVideoTimeline.milliseconds(timestamp - origin),
                                                messageStreamId: link.messageStreamId, writable: writable)
            } catch {
                throw RTMPError(.invalidUse, "\(url): \(error)", underlying: error)
            }
        }
        if !messages.isEmpty { handler.write(messages, chunkStreamId: RTMPClientHandler.ChunkStream.audio) }
    }
}

/// The audio half of a publish, sans I/O: audio frames as RTMP audio messages (FLV audio tag
/// bodies, `FLVAudioTag`) — the AAC sequence header before the first AAC frame and again at each
/// format change and after a reconnection — with timestamps that never go back.
struct RTMPAudioTimeline: Sendable {
    /// The format whose sequence header was last sent on this connection (nil: none yet).
    private(set) var format: AudioFormatDescription?
    /// The last audio message's timestamp.
    private(set) var lastTimestamp: UInt32 = 0
    private(set) var framesSent = 0
    private(set) var framesDropped = 0
    private(set) var sequenceHeaders = 0

    /// The largest frame an audio message carries: 24 bits of length less `AF 01`.
    static let maximumFrameBytes = 0xFF_FFFF - 2

    /// The messages for one frame at `milliseconds` since the publish's origin; empty when the
    /// connection is not `writable`, or when the frame is not later than the last one sent (a
    /// source whose timeline stepped back, as a camera's does when its first sender reports
    /// correct the arrival times): the frame is dropped, as players reject two audio frames at
    /// one time (FFmpeg: "non monotonically increasing dts").
    ///
    /// - Throws: the errors of `FLVAudioTag.frame(_:format:)` and
    ///   `FLVAudioTag.sequenceHeader(_:)`; `MediaError.Code.rtmpMessageTooLarge` for a frame over
    ///   ``maximumFrameBytes``.
    mutating func messages(_ data: [UInt8], format: AudioFormatDescription, milliseconds: Int64, messageStreamId: UInt32,
                           writable: Bool) throws(MediaError) -> [RTMPMessage] {
        guard data.count <= Self.maximumFrameBytes else {
            throw MediaError(.rtmpMessageTooLarge, field: "message length", "an audio frame of \(data.count) bytes does not fit an RTMP message")
        }
        let body = try FLVAudioTag.frame(data, format: format).serialized()
        guard writable else {
            framesDropped += 1
            return []
        }
        let timestamp = UInt32(truncatingIfNeeded: max(milliseconds, 0))
        if framesSent > 0 && timestamp <= lastTimestamp {
            framesDropped += 1
            return []
        }
        var messages: [RTMPMessage] = []
        if format.codec == .aac && format != self.format {
            let header = try FLVAudioTag.sequenceHeader(format).serialized()
            messages.append(RTMPMessage(type: .audio, timestamp: timestamp, messageStreamId: messageStreamId, payload: header))
            sequenceHeaders += 1
        }
        self.format = format
        messages.append(RTMPMessage(type: .audio, timestamp: timestamp, messageStreamId: messageStreamId, payload: body))
        lastTimestamp = timestamp
        framesSent += 1
        return messages
    }

    /// The AAC sequence header of `format` alone, at the last audio time (0 before any frame),
    /// so that a player knows the audio track before the first video keyframe; the first frame
    /// of `format` then goes without one. Empty for G.711 (no sequence header) or when not
    /// `writable`.
    mutating func announcement(of format: AudioFormatDescription, messageStreamId: UInt32, writable: Bool) throws(MediaError) -> [RTMPMessage] {
        guard format.codec == .aac, writable, format != self.format else { return [] }
        let header = try FLVAudioTag.sequenceHeader(format).serialized()
        self.format = format
        sequenceHeaders += 1
        return [RTMPMessage(type: .audio, timestamp: lastTimestamp, messageStreamId: messageStreamId, payload: header)]
    }

    /// Goes on over a new connection: the AAC sequence header is sent again before the next
    /// frame; timestamps go on from the last one.
    mutating func restart() {
        format = nil
    }
}
