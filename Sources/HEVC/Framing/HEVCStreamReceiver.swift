package import MediaCore

/// The reader of an H.265 byte stream for `AnnexBDecoder` and `AnnexBFilePlayer`: NAL units
/// from the one `AnnexBStreamReader`, cut into access units by `HEVCAccessUnitAssembler`, handed out from the first IRAP picture
/// whose SPS has arrived (libavcodec skips the RASL pictures that follow it). What comes before
/// is counted as skipped.
package struct HEVCStreamReceiver: Sendable {
    private var reader = AnnexBStreamReader()
    private var assembler = HEVCAccessUnitAssembler()
    private var ready: [HEVCAccessUnit] = []
    private var started = false
    /// Access units dropped before the first usable IRAP picture.
    package private(set) var skippedAccessUnitCount = 0

    /// The number of bytes received.
    package var streamLength: Int { reader.streamLength }

    /// The frame rate the first SPS signals (VUI timing), if any.
    package var signalledFrameRate: FrameRate? {
        assembler.parameterSets.sequenceParameterSets.values.first?.frameRate
    }

    /// The parameter sets seen so far.
    package var parameterSets: HEVCParameterSetCache { assembler.parameterSets }

    /// A receiver at the start of a stream.
    package init() {}

    /// Takes the next bytes of the stream.
    package mutating func append(_ chunk: some Collection<UInt8>) {
        reader.append(chunk)
    }

    /// The next access unit to decode, or nil when more bytes are needed.
    package mutating func next() -> HEVCAccessUnit? {
        while ready.isEmpty {
            guard let unit = reader.next() else { return nil }
            if let accessUnit = assembler.append(unit) { take(accessUnit) }
        }
        return ready.removeFirst()
    }

    /// Ends the stream: the access units still held, the last one ending with the data.
    package mutating func finish() -> [HEVCAccessUnit] {
        let length = reader.streamLength
        for unit in reader.finish() {
            if let accessUnit = assembler.append(unit) { take(accessUnit) }
        }
        if let last = assembler.finish(streamLength: length) { take(last) }
        defer { ready.removeAll() }
        return ready
    }

    private mutating func take(_ unit: HEVCAccessUnit) {
        if !started {
            guard unit.isIRAP, !assembler.parameterSets.sequenceParameterSets.isEmpty else {
                if unit.hasPicture { skippedAccessUnitCount += 1 }
                return
            }
            started = true
        }
        ready.append(unit)
    }
}
