public import MediaCore
/// The allocation-free reader of a slice header for the access-unit boundary rule.
extension SliceHeader {
    /// What ``read(header:payload:parameterSets:firstWindow:)`` found in a slice NAL unit.
    package enum Reading {
        /// Not even the ``Prefix`` could be read: the unit is damaged.
        case damaged(MediaError)
        /// The ``Prefix`` was read (its `first_mb_in_slice` is given), the rest not: its
        /// parameter sets are unknown, or the header is cut short or out of range.
        case prefix(firstMbInSlice: Int, problem: MediaError)
        /// The whole header: what tells its picture apart, and its tolerable problems.
        case header(PictureIdentity, diagnostics: [MediaError])
    }

    /// Reads the slice header of the NAL unit whose header byte is `header` and whose following
    /// bytes (emulation prevention still present) begin `payload`, with no allocation: the
    /// emulation prevention is removed on the stack, and only as far as the header reaches (the
    /// slice header of every received picture comes through here). The same values and errors
    /// as ``Prefix/init(nalUnit:)`` followed by ``init(prefix:parameterSets:)``.
    ///
    /// `firstWindow` is how many RBSP bytes are decoded first (more only when the header runs
    /// past them); a parameter so that tests can make every header run past it.
    package static func read(header: UInt8, payload: UnsafeBufferPointer<UInt8>, parameterSets: ParameterSetCache,
                     firstWindow: Int = 16) -> Reading {
        let nalHeader: NALUnitHeader
        do throws(MediaError) {
            nalHeader = try withUnsafeBytes(of: header) { (byte) throws(MediaError) in
                try sliceNALUnitHeader(byte.assumingMemoryBound(to: UInt8.self))
            }
        } catch {
            return .damaged(error)
        }
        // Real slice headers fit in a few bytes: 16 RBSP bytes first, all of them when the header
        // runs past those.
        if firstWindow < maximumEncodedSize {
            let first = read(nalHeader, payload, window: Swift.max(1, firstWindow), parameterSets: parameterSets)
            if !first.cutByWindow { return first.reading }
        }
        return read(nalHeader, payload, window: maximumEncodedSize, parameterSets: parameterSets).reading
    }

    /// ``read(header:payload:parameterSets:firstWindow:)`` from at most `window` RBSP bytes;
    /// `cutByWindow` is true when the header ran past the window rather than past the NAL unit
    /// (read it again with more).
    private static func read(_ header: NALUnitHeader, _ payload: UnsafeBufferPointer<UInt8>, window: Int,
                             parameterSets: ParameterSetCache) -> (reading: Reading, cutByWindow: Bool) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: window) { scratch -> (reading: Reading, cutByWindow: Bool) in
            let count = RBSP.decode(payload, into: scratch)
            let windowFull = count == window && window < maximumEncodedSize
            var reader = BitCursor(UnsafeBufferPointer(rebasing: scratch[..<count]))
            let elements: PrefixElements
            do throws(MediaError) {
                elements = try readPrefixElements(&reader)
            } catch {
                return (.damaged(error), windowFull && error.code == .truncated)
            }
            do throws(MediaError) {
                let fields = try parameterSets.sliceHeaderFields(pictureParameterSetId: elements.picParameterSetId)
                let slice = try SliceHeader(nalUnitType: header.nalUnitType, nalRefIdc: header.nalRefIdc, elements: elements,
                                            reading: &reader, fields: fields)
                return (.header(PictureIdentity(slice), diagnostics: slice.diagnostics), false)
            } catch {
                return (.prefix(firstMbInSlice: elements.firstMbInSlice, problem: error), windowFull && error.code == .truncated)
            }
        }
    }
}
