public import MediaCore
/// The receiving end of a live Annex-B stream (a TCP viewer, a pipe, a file being written):
/// bytes in chunks of any size in, decodable access units out.
///
/// ```swift
/// var receiver = AccessUnitReceiver()
/// for chunk in socket {
///     receiver.append(chunk)
///     while let event = receiver.next() {
///         switch event {
///         case .accessUnit(let unit):        decode(unit.data, unit.formatDescription!)   // AVCC
///         case .skipped(let skip):           log("joined: skipped \(skip.byteCount) bytes")
///         case .missingParameterSets(let m): log("no SPS/PPS for the picture at \(m.streamOffset)")
///         }
///     }
/// }
/// ```
///
/// The bytes go through an `AnnexBStreamReader` and an ``AccessUnitAssembler``; the receiver
/// hands out only what a decoder can use: it starts at the first IDR picture (clause 3.69)
/// whose sequence and picture parameter sets it has, and from there every access unit (all
/// slices of one picture, in AVCC with 4-byte lengths) with its ``AccessUnit/formatDescription``
/// (every access unit holding a picture has one; a trailing end of stream alone has none),
/// its keyframe flag ``AccessUnit/isIDR`` and ``AccessUnit/formatChanged`` set on exactly the
/// access units whose format (SPS, PPS) differs from the previous one handed out.
///
/// A receiver that joins mid-stream skips to that first usable IDR and reports what it dropped
/// in one ``Event/skipped(_:)`` event. A picture whose parameter sets the receiver lacks (never
/// sent, sent before it joined, or malformed) is reported as ``Event/missingParameterSets(_:)``
/// — when it is an IDR the receiver waited for, or any picture once decoding — and the receiver
/// then skips to the next usable IDR, reporting that skip too. Nothing in the input can make it
/// trap: malformed NAL units are counted by the assembler (``assemblerErrorCount``).
///
/// Access units handed out keep the assembler's offsets (``AccessUnit/streamOffset``,
/// ``AccessUnit/byteCount``), except that the first of a stream begins at its first start code:
/// bytes before it are skipped bytes.
///
/// An access unit is complete once the first NAL unit of the next one has arrived, so a live
/// receiver hands out a picture one picture late, or at ``finish()``.
/// The result never depends on how the bytes were chunked.
public struct AccessUnitReceiver: Sendable {
    /// What the receiver found in the stream.
    public enum Event: Hashable, Sendable {
        /// A decodable access unit, in stream order (decode order).
        case accessUnit(AccessUnit)
        /// Access units were dropped because a decoder could not use them; reported when
        /// decoding resumes at an IDR (or at ``AccessUnitReceiver/finish()`` if it never did).
        case skipped(Skip)
        /// A picture referred to parameter sets the receiver does not have.
        case missingParameterSets(MissingParameterSets)
    }

    /// Why access units were skipped.
    public enum SkipReason: String, Hashable, Sendable {
        /// The receiver joined the stream where decoding cannot start: it waited for an IDR.
        case waitingForKeyframe
        /// A picture's parameter sets were missing: the receiver waited for the next usable IDR.
        case missingParameterSets
    }

    /// A stretch of the stream the receiver dropped.
    public struct Skip: Hashable, Sendable {
        /// Why the access units were dropped.
        public var reason: SkipReason
        /// How many access units (complete or partial) were dropped.
        public var accessUnitCount: Int
        /// How many bytes were dropped, counted from where skipping began (the first byte
        /// received, for a receiver that joins) to the first start code of the access unit
        /// decoding resumed at: partial NAL units and garbage before the first start code
        /// included.
        public var byteCount: Int
        /// The stream offset of the first start code of the IDR access unit decoding resumed
        /// at, or `nil` when the stream ended first.
        public var resumedAt: Int?

        /// Creates a skip report.
        public init(reason: SkipReason, accessUnitCount: Int, byteCount: Int, resumedAt: Int?) {
            self.reason = reason
            self.accessUnitCount = accessUnitCount
            self.byteCount = byteCount
            self.resumedAt = resumedAt
        }
    }

    /// A picture the receiver could not give a format description.
    public struct MissingParameterSets: Hashable, Sendable {
        /// Where the picture's access unit begins in the stream (``AccessUnit/streamOffset``,
        /// its first start code).
        public var streamOffset: Int
        /// True when the picture is an IDR.
        public var isIDR: Bool
        /// The `pic_parameter_set_id` of its first slice, when it could be read.
        public var pictureParameterSetId: Int?
        /// The `seq_parameter_set_id` that PPS names, when the PPS is known but the SPS is not.
        public var sequenceParameterSetId: Int?

        /// Creates a report.
        public init(streamOffset: Int, isIDR: Bool, pictureParameterSetId: Int?, sequenceParameterSetId: Int?) {
            self.streamOffset = streamOffset
            self.isIDR = isIDR
            self.pictureParameterSetId = pictureParameterSetId
            self.sequenceParameterSetId = sequenceParameterSetId
        }
    }

    private var reader = AnnexBStreamReader()
    private var assembler: AccessUnitAssembler
    /// The assembler counts of the streams already finished (each stream gets a new assembler).
    private var finishedErrorCount = 0
    private var finishedWarningCount = 0
    private var pending: [Event] = []
    private var pendingHead = 0
    /// Stream offset where the current skip began.
    private var skipStart = 0
    private var skipCount = 0
    private var skipReason = SkipReason.waitingForKeyframe
    /// True until the first access unit of the current stream was assembled.
    private var atFirstAccessUnit = true
    private var lastDeliveredFormat: FormatDescription?

    /// True once decoding started at an IDR, until parameter sets go missing or the stream ends.
    public private(set) var isDecoding = false
    /// How many access units were handed out.
    public private(set) var deliveredAccessUnitCount = 0
    /// How many access units were skipped, in all.
    public private(set) var skippedAccessUnitCount = 0
    /// How many bytes were skipped, in all (as ``Skip/byteCount``).
    public private(set) var skippedByteCount = 0
    /// How many ``Event/missingParameterSets(_:)`` events were reported.
    public private(set) var missingParameterSetCount = 0

    /// Creates a receiver at the start of its stream.
    ///
    /// - Parameter parameterSets: parameter sets known out of band (e.g. from an avcC or an
    ///   earlier connection), so that an IDR sent without in-band SPS and PPS can start decoding.
    public init(parameterSets: ParameterSetCache = ParameterSetCache()) {
        assembler = AccessUnitAssembler(parameterSets: parameterSets)
    }

    /// The parameter sets seen so far.
    public var parameterSets: ParameterSetCache { assembler.parameterSets }

    /// The format of the last access unit handed out.
    public var formatDescription: FormatDescription? { lastDeliveredFormat }

    /// How many problems the assembler met, in every stream so far: damaged units skipped
    /// (`forbidden_zero_bit` set, slice headers cut short), malformed parameter sets, slices
    /// naming unknown parameter sets. See ``AccessUnitAssembler/errorCount``.
    public var assemblerErrorCount: Int { finishedErrorCount + assembler.errorCount }

    /// How many tolerable problems (values out of range that were kept) the assembler met, in
    /// every stream so far. See ``AccessUnitAssembler/warningCount``.
    public var assemblerWarningCount: Int { finishedWarningCount + assembler.warningCount }

    /// The assembler's most recent problems in the current stream (see
    /// ``AccessUnitAssembler/recentErrors``).
    public var recentErrors: [MediaError] { assembler.recentErrors }

    /// The assembler's most recent tolerable problems in the current stream (see
    /// ``AccessUnitAssembler/recentWarnings``).
    public var recentWarnings: [MediaError] { assembler.recentWarnings }

    /// The number of bytes received in the current stream.
    public var streamLength: Int { reader.streamLength }

    /// Adds the next bytes of the stream.
    public mutating func append(_ chunk: some Collection<UInt8>) {
        reader.append(chunk)
    }

    /// Adds the next bytes of the stream.
    public mutating func append(contentsOf chunk: UnsafeRawBufferPointer) {
        reader.append(contentsOf: chunk)
    }

    /// The next event, or `nil` when more bytes are needed.
    public mutating func next() -> Event? {
        while pendingHead == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingHead = 0
            guard let unit = reader.next() else { return nil }
            if let accessUnit = assembler.append(unit) { handle(accessUnit) }
        }
        defer { pendingHead += 1 }
        return pending[pendingHead]
    }

    /// Adds `chunk` and returns every event it completed.
    public mutating func receive(_ chunk: some Collection<UInt8>) -> [Event] {
        append(chunk)
        var events: [Event] = []
        while let event = next() { events.append(event) }
        return events
    }

    /// Ends the stream: returns the events of the last access unit (which ends with the data)
    /// and, when the receiver was still skipping, that skip with ``Skip/resumedAt`` `nil`.
    ///
    /// The receiver is then ready for a new stream (a reconnect; offsets start again at 0),
    /// waiting for an IDR, and keeps the parameter sets and counters.
    public mutating func finish() -> [Event] {
        var events: [Event] = []
        while let event = next() { events.append(event) }
        let length = reader.streamLength
        for unit in reader.finish() {
            if let accessUnit = assembler.append(unit) { handle(accessUnit) }
        }
        if let last = assembler.finish(streamLength: length) { handle(last) }
        if !isDecoding, skipCount > 0 || length > skipStart {
            emitSkip(resumedAt: nil, endingAt: length)
        }
        events.append(contentsOf: pending[pendingHead...])
        pending.removeAll(keepingCapacity: true)
        pendingHead = 0
        finishedErrorCount += assembler.errorCount
        finishedWarningCount += assembler.warningCount
        assembler = AccessUnitAssembler(parameterSets: assembler.parameterSets)
        isDecoding = false
        skipStart = 0
        skipCount = 0
        skipReason = .waitingForKeyframe
        atFirstAccessUnit = true
        return events
    }

    private mutating func handle(_ unit: AccessUnit) {
        var unit = unit
        if atFirstAccessUnit {
            // The assembler's first access unit begins at offset 0 even when bytes before the
            // first start code were dropped; here those bytes belong to the skip.
            let start = Swift.min(reader.skippedByteCount, unit.streamOffset + unit.byteCount)
            unit.byteCount -= start - unit.streamOffset
            unit.streamOffset = start
            atFirstAccessUnit = false
        }
        let firstStartCode = unit.streamOffset
        let missing = unit.hasPicture && unit.formatDescription == nil
        if missing && (isDecoding || unit.isIDR) {
            missingParameterSetCount += 1
            pending.append(.missingParameterSets(describeMissing(unit)))
        }
        if isDecoding {
            if missing {
                isDecoding = false
                skipStart = firstStartCode
                skipCount = 1
                skipReason = .missingParameterSets
            } else {
                deliver(unit)
            }
        } else if unit.isIDR && !missing {
            if skipCount > 0 || firstStartCode > skipStart {
                emitSkip(resumedAt: firstStartCode, endingAt: firstStartCode)
            }
            isDecoding = true
            deliver(unit)
        } else {
            skipCount += 1
        }
    }

    private mutating func emitSkip(resumedAt: Int?, endingAt end: Int) {
        let skip = Skip(reason: skipReason, accessUnitCount: skipCount, byteCount: Swift.max(0, end - skipStart),
                        resumedAt: resumedAt)
        skippedAccessUnitCount += skip.accessUnitCount
        skippedByteCount += skip.byteCount
        pending.append(.skipped(skip))
        skipCount = 0
    }

    private mutating func deliver(_ unit: AccessUnit) {
        var unit = unit
        unit.formatChanged = lastDeliveredFormat != nil && unit.formatDescription != nil
            && lastDeliveredFormat != unit.formatDescription
        if let format = unit.formatDescription { lastDeliveredFormat = format }
        deliveredAccessUnitCount += 1
        pending.append(.accessUnit(unit))
    }

    private func describeMissing(_ unit: AccessUnit) -> MissingParameterSets {
        var ppsId: Int?
        var spsId: Int?
        if let slice = unit.nalUnits.first(where: { $0.first.map { NALUnitHeader(byte: $0).nalUnitType.isVCL } ?? false }) {
            ppsId = try? SliceHeader.Prefix(nalUnit: slice).picParameterSetId
            if let ppsId, let pps = assembler.parameterSets.pictureParameterSets[ppsId],
               assembler.parameterSets.sequenceParameterSets[pps.seqParameterSetId] == nil {
                spsId = pps.seqParameterSetId
            }
        }
        return MissingParameterSets(streamOffset: unit.streamOffset, isIDR: unit.isIDR,
                                    pictureParameterSetId: ppsId, sequenceParameterSetId: spsId)
    }
}
