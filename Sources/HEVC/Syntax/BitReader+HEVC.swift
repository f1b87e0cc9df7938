public import MediaCore

extension BitReader {
    /// A reader over the RBSP of an H.265 NAL unit (its two header bytes kept; only the first
    /// `limit` RBSP bytes when given), after checking that it has a header.
    static func hevc(nalUnit: some Collection<UInt8>, recordsElements: Bool = false, limit: Int? = nil) throws(MediaError) -> BitReader {
        guard nalUnit.count >= HEVCNALUnitHeader.byteCount else {
            throw MediaError(.emptyNALUnit, field: "nal_unit_header", "NAL unit shorter than its 2-byte header")
        }
        return BitReader(RBSP.decode(nalUnit, limit: limit), recordsElements: recordsElements)
    }

    /// Reads a whole H.265 NAL unit with `read` (a parameter set's clause 7.3 reading): the one
    /// entry behind each parameter set's `init(nalUnit:)` and `syntaxElements(nalUnit:)`.
    ///
    /// - Returns: what `read` made, and the elements it read when `recordsElements` is true.
    static func readHEVC<Value>(nalUnit: some Collection<UInt8>, recordsElements: Bool = false, limit: Int? = nil,
                                _ read: (inout BitReader) throws(MediaError) -> Value) throws(MediaError) -> (value: Value, elements: [SyntaxElement]) {
        var reader = try hevc(nalUnit: nalUnit, recordsElements: recordsElements, limit: limit)
        let value = try read(&reader)
        return (value, reader.syntaxElements)
    }

    /// Reads `nal_unit_header()` (clause 7.3.1.2) as its four elements and checks the type.
    ///
    /// - Returns: the header.
    /// - Throws: `MediaError.Code.forbiddenZeroBit`, `MediaError.Code.unexpectedNALUnitType`,
    ///   `MediaError.Code.valueOutOfRange` (`nuh_temporal_id_plus1` = 0).
    @discardableResult
    mutating func readHEVCNALUnitHeader(expecting type: HEVCNALUnitType) throws(MediaError) -> HEVCNALUnitHeader {
        if try readBits(1, "forbidden_zero_bit") != 0 {
            throw MediaError(.forbiddenZeroBit, field: "forbidden_zero_bit", byteOffset: 0, bitOffset: 0, "forbidden_zero_bit is 1")
        }
        let nalUnitType = HEVCNALUnitType(rawValue: UInt8(try readBits(6, "nal_unit_type")))
        guard nalUnitType == type else {
            throw MediaError(.unexpectedNALUnitType, field: "nal_unit_type", byteOffset: 0, bitOffset: 1,
                            "NAL unit type \(nalUnitType), expected \(type)")
        }
        let layer = try readBits(6, "nuh_layer_id")
        let at = bitOffset
        let temporal = try readBits(3, "nuh_temporal_id_plus1")
        if temporal == 0 {
            throw MediaError(.valueOutOfRange, field: "nuh_temporal_id_plus1", bitOffset: at, "0 is outside 1...7")
        }
        return HEVCNALUnitHeader(nalUnitType: type, nuhLayerId: UInt8(layer), nuhTemporalIdPlus1: UInt8(temporal))
    }

    /// Reads a reserved field that shall be 0 (`fixed(n)` in FFmpeg's tables): another value is
    /// kept with a warning. Fields over 32 bits are read as FFmpeg's `trace_headers` lists them:
    /// 24 bits, then the rest, both under the field's name.
    ///
    /// - Returns: the bits read, first bit highest.
    mutating func readReservedZero(_ count: Int, _ name: String) throws(MediaError) -> UInt64 {
        if count > 32 {
            let high = try readReservedZero(24, name)
            return high << UInt64(count - 24) | (try readReservedZero(count - 24, name))
        }
        return UInt64(try readBits(count, name, tolerating: { $0 == 0 }, "0"))
    }

    /// Reads a signed Exp-Golomb code whose range is tolerable: a value outside `range` is kept
    /// and recorded in `BitReader.diagnostics` (as `BitReader.readUE(_:tolerating:)`
    /// does for unsigned codes).
    mutating func readSE(_ name: @autoclosure () -> String, tolerating range: ClosedRange<Int>) throws(MediaError) -> Int {
        let start = bitOffset
        let value = try readSE(name())
        if !range.contains(value) {
            warn(.valueOutOfRange, name(), at: start, "\(value) is outside \(range.lowerBound)...\(range.upperBound) (kept)")
        }
        return value
    }

    /// Reads `PREFIX_extension_present_flag` and, when set, the four extension flags and
    /// `PREFIX_extension_4bits` (clauses 7.3.2.2 and 7.3.2.3, `PREFIX` `sps` or `pps`).
    ///
    /// - Returns: the range, multilayer, 3D and SCC flags in bits 7…4 and the 4 bits below; 0
    ///   without extensions.
    mutating func readExtensionFlags(_ prefix: String) throws(MediaError) -> Int {
        guard try readFlag("\(prefix)_extension_present_flag") else { return 0 }
        var flags = 0
        for name in ["range", "multilayer", "3d", "scc"] {
            flags = flags << 1 | (try readBits(1, "\(prefix)_\(name)_extension_flag"))
        }
        return flags << 4 | (try readBits(4, "\(prefix)_extension_4bits"))
    }

    /// Reads `rbsp_trailing_bits()` unless `skipped` is true (the rest of the RBSP is extension
    /// data this library does not read).
    mutating func readTrailingBits(unlessSkipped skipped: Bool) throws(MediaError) {
        if !skipped { try readTrailingBits() }
    }
}
