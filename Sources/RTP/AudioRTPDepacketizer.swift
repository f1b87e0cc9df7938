public import MediaCore
import AudioCodecs

/// Turns the RTP packets of one audio track into its codec frames: RFC 3640 `mpeg4-generic`
/// AAC (several access units in a packet, or one fragmented over packets up to the marker bit),
/// RFC 6416 `MP4A-LATM` (an `AudioMuxElement` per packet or run of packets up to the marker,
/// its subframes' lengths in 0xFF runs), RFC 3551 PCMU / PCMA and RFC 7587 Opus (the payload is
/// the frame). Sans-I/O: packets in, events out.
///
/// ```swift
/// var depacketizer = AudioRTPDepacketizer(media: sdp.audio!)
/// depacketizer.append(packet: datagram)
/// while let event = depacketizer.next() {
///     if case .accessUnit(let received) = event { play(received.accessUnit) }
/// }
/// ```
///
/// Each frame's `presentationTime` is its timestamp's distance from the first packet's, in the
/// track's clock (`clockRate`), as a `Duration`; several access units of one packet are
/// `samplesPerFrame` apart. Packets are not reordered: a gap in sequence numbers is a `.loss`,
/// a packet behind the last one a `latePacket` diagnostic. Nothing traps and nothing grows
/// without bound: a fragmented frame larger than ``maximumFrameSize`` is dropped.
public struct AudioRTPDepacketizer: Sendable {
    /// What the depacketizer found: frames (one per codec frame), losses and diagnostics.
    public typealias Event = RTPDepacketizerEvent<CompressedFrame>

    /// The largest frame reassembled from fragments (bytes); a larger one is dropped with a
    /// `valueOutOfRange` diagnostic.
    public static let maximumFrameSize = 65_536

    /// The track's description: payload type, clock rate, payload format.
    public let media: AudioMediaDescription
    /// The format frames are given: the description's, or the last in-band LATM configuration's.
    public private(set) var format: AudioFormatDescription

    private var streamMuxConfig: StreamMuxConfig?
    private var events: [Event] = []
    private var head = 0
    private var ssrc: UInt32?
    private var expectedSequenceNumber: UInt16?
    private var timeline: RTPTimeline
    /// A frame (AAC) or `AudioMuxElement` (LATM) being reassembled from fragments.
    private var fragment: [UInt8] = []
    private var fragmentTimestamp: UInt32?
    private var fragmentSize = 0
    /// Fragments of a dropped frame are skipped up to its marker bit.
    private var discardingUntilMarker = false

    /// A depacketizer for the track `media` describes.
    ///
    /// - Parameter media: the track's `m=audio` section (``SessionDescription/audio``).
    public init(media: AudioMediaDescription) {
        self.media = media
        format = media.format
        timeline = RTPTimeline(clockRate: media.clockRate)
        if case .latm(_, let config) = media.payloadFormat { streamMuxConfig = config }
    }

    /// The next event, in the order found; nil when there is none until more packets come.
    public mutating func next() -> Event? {
        guard head < events.count else { return nil }
        let event = events[head]
        head += 1
        if head == events.count { events.removeAll(keepingCapacity: true); head = 0 }
        return event
    }

    /// Reads one whole RTP packet (header included).
    ///
    /// - Parameter packet: the packet's bytes, as received.
    public mutating func append(packet: [UInt8]) {
        let header: RTPHeader, range: Range<Int>
        do throws(MediaError) {
            (header, range) = try RTPHeader.parse(packet)
        } catch {
            return diagnose(error)
        }
        guard header.payloadType == media.payloadType else {
            return diagnose(MediaError(.unexpectedPayloadType, field: "PT", byteOffset: 1,
                                       "payload type \(header.payloadType), expected \(media.payloadType)"))
        }
        if let ssrc, ssrc != header.ssrc {
            diagnose(MediaError(.ssrcChanged, field: "SSRC", byteOffset: 8, "SSRC \(header.ssrc) after \(ssrc): starting over"))
            expectedSequenceNumber = nil
            dropFragment()
        }
        ssrc = header.ssrc
        if let expected = expectedSequenceNumber {
            let gap = Int(Int16(bitPattern: header.sequenceNumber &- expected))
            if gap < 0 {
                return diagnose(MediaError(.latePacket, field: "sequence number", byteOffset: 2,
                                           "packet \(header.sequenceNumber) after \(expected &- 1): dropped"))
            }
            if gap > 0 {
                let partial = !fragment.isEmpty || discardingUntilMarker
                events.append(.loss(RTPDepacketizer.Loss(firstSequenceNumber: expected, packetCount: gap,
                                                         droppedPartialAccessUnit: partial)))
                dropFragment()
            }
        }
        expectedSequenceNumber = header.sequenceNumber &+ 1
        let ticks = timeline.ticks(of: header.timestamp)
        let payload = packet[range]
        switch media.payloadFormat {
        case .mpeg4Generic(let sizeLength, let indexLength, let indexDeltaLength):
            readAUHeaders(payload, header: header, ticks: ticks,
                          lengths: (sizeLength, indexLength, indexDeltaLength))
        case .latm(let muxConfigPresent, _):
            readLATM(payload, header: header, ticks: ticks, muxConfigPresent: muxConfigPresent)
        case .g711, .opus:
            guard !payload.isEmpty else {
                return diagnose(MediaError(.truncated, field: "payload", byteOffset: range.lowerBound, "an empty payload: skipped"))
            }
            emit(Array(payload), header: header, ticks: ticks, index: 0)
        }
    }

    // MARK: RFC 3640

    /// An `AU-headers-length`, the AU headers, then the access units (RFC 3640 section 3.2.1);
    /// or a fragment of one access unit (section 3.2.3: one AU header, the whole AU's size).
    private mutating func readAUHeaders(_ payload: ArraySlice<UInt8>, header: RTPHeader, ticks: Int64,
                                        lengths: (size: Int, index: Int, indexDelta: Int)) {
        let start = payload.startIndex
        guard payload.count >= 2 else {
            dropFragment()
            return diagnose(MediaError(.truncated, field: "AU-headers-length", byteOffset: start, "\(payload.count) payload bytes"))
        }
        let bits = Int(payload[start]) << 8 | Int(payload[start + 1])
        let sectionBytes = (bits + 7) / 8
        guard sectionBytes <= payload.count - 2 else {
            // go2rtc PR #2513: AU headers longer than the packet.
            dropFragment()
            return diagnose(MediaError(.lengthPastEnd, field: "AU-headers-length", byteOffset: start,
                                       "\(bits) bits of AU headers, \(payload.count - 2) bytes after it: packet skipped"))
        }
        var reader = BitReader(Array(payload[(start + 2)..<(start + 2 + sectionBytes)]))
        var sizes: [Int] = []
        var used = 0
        guard lengths.size > 0 else {
            return diagnose(MediaError(.valueOutOfRange, field: "sizelength", "AU headers of 0 bits"))
        }
        while true {
            let indexBits = sizes.isEmpty ? lengths.index : lengths.indexDelta
            guard used + lengths.size + indexBits <= bits,
                  let size = try? reader.readBits(lengths.size, "AU-size"),
                  (try? reader.skipBits(indexBits, sizes.isEmpty ? "AU-Index" : "AU-Index-delta")) != nil else { break }
            used += lengths.size + indexBits
            sizes.append(size)
        }
        let data = payload[(start + 2 + sectionBytes)...]
        if let expected = fragmentTimestamp {
            // A later fragment: its AU header repeats the whole AU's size.
            guard expected == header.timestamp, sizes.count == 1, sizes[0] == fragmentSize else {
                diagnose(MediaError(.incompleteFragment, field: "AU-size", byteOffset: start,
                                    "a fragmented access unit of \(fragmentSize) bytes interrupted: dropped"))
                dropFragment()
                return readAUHeaders(payload, header: header, ticks: ticks, lengths: lengths)
            }
            fragment += data
            guard fragment.count <= fragmentSize else {
                diagnose(MediaError(.lengthPastEnd, field: "AU-size", byteOffset: start,
                                    "fragments of \(fragment.count) bytes for an access unit of \(fragmentSize): dropped"))
                dropFragment()
                discardingUntilMarker = !header.marker
                return
            }
            if header.marker || fragment.count == fragmentSize { finishFragment(header: header, ticks: ticks) }
            return
        }
        if discardingUntilMarker {
            if header.marker { discardingUntilMarker = false }
            return
        }
        guard !sizes.isEmpty else {
            return diagnose(MediaError(.valueOutOfRange, field: "AU-headers-length", byteOffset: start,
                                       "\(bits) bits hold no AU header: packet skipped"))
        }
        if sizes.count == 1, sizes[0] > data.count {
            // The first fragment of an access unit larger than the packet (RFC 3640 section 3.2.3).
            guard sizes[0] <= Self.maximumFrameSize else {
                diagnose(MediaError(.valueOutOfRange, field: "AU-size", byteOffset: start + 2,
                                    "a fragmented access unit of \(sizes[0]) bytes: above \(Self.maximumFrameSize), dropped"))
                discardingUntilMarker = !header.marker
                return
            }
            fragmentSize = sizes[0]
            fragmentTimestamp = header.timestamp
            fragment = Array(data)
            if header.marker { finishFragment(header: header, ticks: ticks) }
            return
        }
        var offset = data.startIndex
        for (index, size) in sizes.enumerated() {
            guard size <= data.endIndex - offset else {
                return diagnose(MediaError(.lengthPastEnd, field: "AU-size", byteOffset: offset,
                                           "access unit \(index) of \(size) bytes, \(data.endIndex - offset) left: the rest skipped"))
            }
            if size == 0 {
                // bluenviron/gortsplib#542: zero-length access units.
                diagnose(MediaError(.valueOutOfRange, field: "AU-size", byteOffset: start + 2, "access unit \(index) has 0 bytes: skipped"))
                continue
            }
            emit(Array(data[offset..<(offset + size)]), header: header, ticks: ticks, index: index)
            offset += size
        }
    }

    /// The reassembled access unit, when its fragments add up to its size.
    private mutating func finishFragment(header: RTPHeader, ticks: Int64) {
        let frame = fragment
        let complete = frame.count == fragmentSize
        dropFragment()
        guard complete else {
            return diagnose(MediaError(.incompleteFragment, field: "AU-size", "fragments of \(frame.count) bytes for an access unit of \(fragmentSize)"))
        }
        emit(frame, header: header, ticks: ticks, index: 0)
    }

    // MARK: RFC 6416

    /// Gathers an `AudioMuxElement` up to the marker bit, then gives its subframes.
    private mutating func readLATM(_ payload: ArraySlice<UInt8>, header: RTPHeader, ticks: Int64, muxConfigPresent: Bool) {
        if discardingUntilMarker {
            if header.marker { discardingUntilMarker = false }
            return
        }
        if let expected = fragmentTimestamp, expected != header.timestamp {
            diagnose(MediaError(.incompleteFragment, field: "AudioMuxElement", byteOffset: payload.startIndex,
                                "an element of \(fragment.count) bytes without its marker bit: dropped"))
            dropFragment()
        }
        guard fragment.count + payload.count <= Self.maximumFrameSize else {
            diagnose(MediaError(.valueOutOfRange, field: "AudioMuxElement", byteOffset: payload.startIndex,
                                "an element above \(Self.maximumFrameSize) bytes: dropped"))
            dropFragment()
            discardingUntilMarker = !header.marker
            return
        }
        fragment += payload
        fragmentTimestamp = header.timestamp
        guard header.marker else { return }
        let element = fragment
        dropFragment()
        do throws(MediaError) {
            let read = try AudioMuxElement(element, muxConfigPresent: muxConfigPresent, streamMuxConfig: streamMuxConfig)
            if read.carriedStreamMuxConfig, read.streamMuxConfig != streamMuxConfig {
                streamMuxConfig = read.streamMuxConfig
                format = read.streamMuxConfig.audioSpecificConfig.formatDescription
            }
            for (index, payload) in read.payloads.enumerated() where !payload.isEmpty {
                emit(payload, header: header, ticks: ticks, index: index)
            }
        } catch {
            diagnose(error)
        }
    }

    // MARK: Events

    private mutating func dropFragment() {
        fragment = []
        fragmentTimestamp = nil
        fragmentSize = 0
    }

    private mutating func diagnose(_ error: MediaError) {
        events.append(.diagnostic(error))
    }

    /// A frame, the `index`th of its packet: `samplesPerFrame` (in the clock's ticks) after the one before.
    private mutating func emit(_ data: [UInt8], header: RTPHeader, ticks: Int64, index: Int) {
        let samples = Int64(format.samplesPerFrame ?? 1024)
        let step = index == 0 ? 0 : Int64(index) * samples * Int64(timeline.clockRate) / Int64(max(1, format.sampleRate))
        let time = Duration.seconds(1) * (ticks + step) / timeline.clockRate
        let frame = CompressedFrame(data: data, format: format, presentationTime: time)
        events.append(.accessUnit(RTPReceivedAccessUnit(accessUnit: frame, timestamp: header.timestamp &+ UInt32(truncatingIfNeeded: step),
                                                        endedByMarker: header.marker)))
    }
}
