public import H264
public import HEVC

/// Turns ``EncodedFrame``s into an Annex-B byte stream (clause B.1 of H.264 and of H.265) as
/// `.h264` and `.265` files, TCP viewers and ffplay/VLC expect: every NAL unit after a 4-byte
/// start code `00 00 00 01`, with the format's parameter sets (`VideoFormatDescription.parameterSets`:
/// SPS and PPS, or VPS, SPS and PPS) written before every keyframe so a decoder can start at any
/// keyframe, and optionally an access unit delimiter (H.264 clause 7.3.2.4, H.265 clause 7.3.2.5)
/// opening every picture.
///
/// The writer has two ways to write:
/// - ``append(_:to:)`` is stateless: parameter sets before every IDR, nothing else. Any number
///   of threads may share one writer this way.
/// - ``write(_:to:)`` remembers what it sent: besides before every IDR, it sends the parameter
///   sets again before the first frame after ``init(accessUnitDelimiters:)`` or ``reset()``
///   (a new connection, a session invalidated and replaced) and before any frame whose
///   ``EncodedFrame/formatDescription`` differs from the last one sent (a format change), so
///   the receiver always has the parameter sets of the picture it is given.
///
/// Output is appended to a caller's buffer whose capacity is reserved once per frame: no
/// allocation per NAL unit; AVCC lengths are rewritten into start codes in place.
public struct AnnexBWriter: Sendable {
    /// True when every picture is opened by an access unit delimiter (`nal_unit_type` 9) whose
    /// `primary_pic_type` follows the frame type (clause 7.4.2.4, Table 7-5).
    public var accessUnitDelimiters: Bool

    /// The format whose parameter sets ``write(_:to:)`` sent last; `nil` before the first
    /// frame and after ``reset()``.
    public private(set) var lastSentFormat: VideoFormatDescription?

    /// How many frames ``write(_:to:)`` preceded with parameter sets.
    public private(set) var parameterSetWriteCount = 0

    /// Creates a writer.
    ///
    /// - Parameter accessUnitDelimiters: open every picture with an access unit delimiter
    ///   (some demuxers and hardware decoders want one; FFmpeg does not need it).
    public init(accessUnitDelimiters: Bool = false) {
        self.accessUnitDelimiters = accessUnitDelimiters
    }

    /// Forgets what was sent: the next ``write(_:to:)`` starts with SPS and PPS whatever the
    /// frame. Call it for a new receiver (reconnect) or after the encoder session was
    /// invalidated and replaced.
    public mutating func reset() {
        lastSentFormat = nil
    }

    /// True when ``write(_:to:)`` would send parameter sets before `frame`: an IDR, the first
    /// frame after creation or ``reset()``, or a frame of another format than the last sent.
    public func needsParameterSets(before frame: EncodedFrame) -> Bool {
        frame.isKeyframe || lastSentFormat != frame.format
    }

    /// Appends the Annex-B bytes of `frame` to `output`, sending parameter sets whenever the
    /// receiver might lack them (see ``needsParameterSets(before:)``).
    ///
    /// - Throws: `MediaError.Code.lengthPastEnd` or `.truncated` for a malformed ``EncodedFrame/data``;
    ///   `output` is then as it was.
    public mutating func write(_ frame: EncodedFrame, to output: inout [UInt8]) throws(MediaError) {
        let withParameterSets = needsParameterSets(before: frame)
        try Self.append(frame, parameterSets: withParameterSets, delimiter: accessUnitDelimiters, to: &output)
        if withParameterSets {
            lastSentFormat = frame.format
            parameterSetWriteCount += 1
        }
    }

    /// The Annex-B bytes of `frame`: an access unit delimiter when enabled, SPS and PPS before
    /// an IDR, then the frame's NAL units.
    ///
    /// - Throws: `MediaError.Code.lengthPastEnd` or `.truncated` for a malformed ``EncodedFrame/data``.
    public func annexB(_ frame: EncodedFrame) throws(MediaError) -> [UInt8] {
        var out: [UInt8] = []
        try append(frame, to: &out)
        return out
    }

    /// Appends the Annex-B bytes of `frame` to `output`: an access unit delimiter when enabled,
    /// SPS and PPS before an IDR, then the frame's NAL units. Stateless (see ``write(_:to:)``).
    ///
    /// - Throws: `MediaError.Code.lengthPastEnd` or `.truncated` for a malformed ``EncodedFrame/data``;
    ///   `output` is then as it was.
    public func append(_ frame: EncodedFrame, to output: inout [UInt8]) throws(MediaError) {
        try Self.append(frame, parameterSets: frame.isKeyframe, delimiter: accessUnitDelimiters, to: &output)
    }

    /// The number of bytes ``append(_:to:)`` writes for `frame` with or without parameter sets.
    public func annexBByteCount(of frame: EncodedFrame, parameterSets: Bool) -> Int {
        Self.byteCount(of: frame, parameterSets: parameterSets, delimiter: accessUnitDelimiters)
    }

    private static func byteCount(of frame: EncodedFrame, parameterSets: Bool, delimiter: Bool) -> Int {
        var count = frame.data.count + (delimiter ? (frame.format.codec == .h264 ? 6 : 7) : 0)
        if parameterSets { forEachParameterSet(of: frame.format) { count += 4 + $0.count } }
        return count
    }

    /// Calls `body` with each parameter set of `format` in `VideoFormatDescription.parameterSets`
    /// order, without building that array (no allocation per frame).
    private static func forEachParameterSet(of format: VideoFormatDescription, _ body: ([UInt8]) -> Void) {
        if let description = format.h264 {
            description.sequenceParameterSets.forEach(body)
            description.pictureParameterSets.forEach(body)
        } else if let record = format.hevc {
            for array in record.arrays { array.nalUnits.forEach(body) }
        } else {
            format.parameterSets.forEach(body)
        }
    }

    /// Appends the NAL unit header of an access unit delimiter: H.264's one byte
    /// (`nal_unit_type` 9), H.265's two (`nal_unit_type` 35, `nuh_layer_id` 0,
    /// `nuh_temporal_id_plus1` 1).
    private static func appendDelimiterHeader(_ codec: VideoCodec, to output: inout [UInt8]) {
        switch codec {
        case .h264: output.append(0x09)
        case .hevc: output.append(35 << 1); output.append(0x01)
        }
    }

    /// The access unit delimiter RBSP byte: `primary_pic_type` (3 bits, H.264 Table 7-5; H.265's
    /// `pic_type`, Table 7-2, has the same values) then the stop bit. I and IDR pictures: 0
    /// (I slices only); P: 1 (I, P); B: 2 (I, P, B).
    static func delimiterPayload(for type: EncodedFrame.FrameType) -> UInt8 {
        let primaryPicType: UInt8
        switch type {
        case .idr, .i: primaryPicType = 0
        case .p: primaryPicType = 1
        case .b, .bReference: primaryPicType = 2
        }
        return primaryPicType << 5 | 0x10
    }

    private static func append(_ frame: EncodedFrame, parameterSets: Bool, delimiter: Bool,
                               to output: inout [UInt8]) throws(MediaError) {
        let start = output.count
        let needed = start + byteCount(of: frame, parameterSets: parameterSets, delimiter: delimiter)
        if output.capacity < needed {
            // Grow geometrically: a caller appending a whole stream to one buffer stays linear.
            output.reserveCapacity(Swift.max(needed, output.capacity * 2))
        }
        if delimiter {
            appendStartCode(to: &output)
            appendDelimiterHeader(frame.format.codec, to: &output)
            output.append(delimiterPayload(for: frame.frameType))
        }
        if parameterSets {
            forEachParameterSet(of: frame.format) { ps in
                appendStartCode(to: &output)
                output.append(contentsOf: ps)
            }
        }
        let dataStart = output.count
        output.append(contentsOf: frame.data)
        do {
            try output.withUnsafeMutableBufferPointer { (buffer) throws(MediaError) in
                try convertLengthsToStartCodes(UnsafeMutableBufferPointer(rebasing: buffer[dataStart...]))
            }
        } catch {
            output.removeSubrange(start...)
            throw error
        }
    }

    @inline(__always)
    private static func appendStartCode(to output: inout [UInt8]) {
        output.append(0); output.append(0); output.append(0); output.append(1)
    }

    /// Rewrites AVCC data with 4-byte lengths into Annex-B in place: each 4-byte length becomes
    /// the start code `00 00 00 01` (the cost is per NAL unit, not per byte).
    ///
    /// The walk over the lengths is `AVCC.forEachNALUnit(in:lengthSize:allowingEmptyNALUnits:_:)`.
    ///
    /// - Throws: `MediaError.Code.lengthPastEnd` when a length runs past the end,
    ///   `MediaError.Code.truncated` when fewer than 4 bytes remain for a length; the
    ///   buffer is then partly converted.
    public static func convertLengthsToStartCodes(_ data: inout [UInt8]) throws(MediaError) {
        try data.withUnsafeMutableBufferPointer { (buffer) throws(MediaError) in
            try convertLengthsToStartCodes(buffer)
        }
    }

    static func convertLengthsToStartCodes(_ buffer: UnsafeMutableBufferPointer<UInt8>) throws(MediaError) {
        try AVCC.forEachNALUnit(in: UnsafeRawBufferPointer(buffer), lengthSize: 4, allowingEmptyNALUnits: true) { lengthOffset, _ in
            buffer[lengthOffset] = 0; buffer[lengthOffset + 1] = 0; buffer[lengthOffset + 2] = 0; buffer[lengthOffset + 3] = 1
        }
    }
}
