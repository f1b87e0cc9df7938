import MediaCore
/// The access-unit boundary rule (clauses 7.4.1.2.3 and 7.4.1.2.4): whether a NAL unit begins a
/// new access unit. The one rule behind ``AccessUnitAssembler`` and the raw AVCC stream
/// conversion (`AnnexB.fromAVCCStream(_:lengthSize:parameterSets:startCodes:)`).
///
/// A new access unit begins, once the current one holds a coded picture, with an access unit
/// delimiter, SPS, PPS, SEI or NAL unit types 14…18, or with the first VCL NAL unit of a new
/// primary coded picture — a slice whose header differs from the previous slice's in
/// `frame_num`, `pic_parameter_set_id`, field flags, `nal_ref_idc` being zero, picture order
/// count, IDR-ness or `idr_pic_id` (clause 7.4.1.2.4). Two further rules keep real,
/// not-quite-conforming streams apart: a second primary slice starting at macroblock 0 begins a
/// new picture (encoders that repeat `idr_pic_id`), and a slice whose parameter sets are unknown
/// falls back to FFmpeg's rule (`first_mb_in_slice` not increasing). End of sequence and end of
/// stream stay with the access unit before them (an end of stream may follow an end of
/// sequence); the next NAL unit begins a new one. Redundant coded pictures
/// (`redundant_pic_cnt` > 0) stay with their primary picture.
package struct AccessUnitBoundary: Sendable {
    /// What the rule found out about one NAL unit.
    package struct Decision {
        /// True when the NAL unit begins a new access unit (never for the very first unit).
        package var startsNew: Bool
        /// What tells the slice's picture apart, when the unit is a slice whose parameter sets
        /// are known.
        package var picture: SliceHeader.PictureIdentity?
        /// The slice header's tolerable problems (``SliceHeader/diagnostics``).
        package var diagnostics: [MediaError] = []
        /// `first_mb_in_slice`, when the unit is a slice whose header prefix could be read.
        package var firstMb: Int?
        /// Why a slice header could not be read, if it could not.
        package var problem: MediaError?
        /// True when not even the slice header's ``SliceHeader/Prefix`` could be read: the unit
        /// is damaged and cannot be placed in any access unit.
        package var isDamaged = false
    }

    /// True while the current access unit holds no NAL unit.
    package private(set) var isEmpty = true
    /// `pic_parameter_set_id` of the current access unit's first primary slice.
    package private(set) var firstPPSId: Int?
    private var hasVCL = false
    private var lastSlice: SliceHeader.PictureIdentity?
    private var lastFirstMb = -1
    private var sawPrimaryMbZero = false
    private var closedByEndOfSequence = false
    private var closedByEndOfStream = false

    /// Decides whether `nalUnit` (its header byte first, whose `forbidden_zero_bit` is 0; never
    /// empty) begins a new access unit, reading slice headers with `parameterSets`. Follow it
    /// with ``record(_:type:)``.
    package func decide(_ nalUnit: some Collection<UInt8>, type: NALUnitType, parameterSets: ParameterSetCache) -> Decision {
        // One non-generic rule over contiguous bytes.
        let decideContiguous = { (bytes: UnsafeBufferPointer<UInt8>) in
            decide(header: bytes[0], payload: UnsafeBufferPointer(rebasing: bytes.dropFirst()), type: type, parameterSets: parameterSets)
        }
        return nalUnit.withContiguousStorageIfAvailable(decideContiguous) ?? Array(nalUnit).withUnsafeBufferPointer(decideContiguous)
    }

    /// ``decide(_:type:parameterSets:)`` for the NAL unit whose header byte is `header` and whose
    /// following bytes begin `payload` (a fragmented NAL unit's rebuilt header byte and the
    /// bytes of its first fragment); only the slice header's bytes are read.
    package func decide(header: UInt8, payload: UnsafeBufferPointer<UInt8>, type: NALUnitType, parameterSets: ParameterSetCache) -> Decision {
        // After end of sequence only an end of stream may follow in the same access unit.
        var decision = Decision(startsNew: !isEmpty && (closedByEndOfStream || (closedByEndOfSequence && type != .endOfStream)))
        switch type.rawValue {
        case 6, 7, 8, 9, 14, 15, 16, 17, 18:
            if hasVCL { decision.startsNew = true }
        case 1, 2, 5:
            switch SliceHeader.read(header: header, payload: payload, parameterSets: parameterSets) {
            case .damaged(let error):
                decision.problem = error
                decision.isDamaged = true
                return decision
            case .prefix(let firstMb, let problem):
                decision.firstMb = firstMb
                decision.problem = problem
            case .header(let picture, let diagnostics):
                decision.firstMb = picture.firstMbInSlice
                decision.picture = picture
                decision.diagnostics = diagnostics
            }
            if hasVCL {
                if let slice = decision.picture, let lastSlice {
                    if slice.startsNewPicture(after: lastSlice) { decision.startsNew = true }
                    if slice.redundantPicCnt == 0 && slice.firstMbInSlice == 0 && sawPrimaryMbZero { decision.startsNew = true }
                } else if let firstMb = decision.firstMb, firstMb <= lastFirstMb {
                    decision.startsNew = true
                }
            }
        default:
            break
        }
        return decision
    }

    /// Records the NAL unit just decided on: starts a new access unit first when the decision
    /// says so.
    package mutating func record(_ decision: Decision, type: NALUnitType) {
        if decision.startsNew { self = AccessUnitBoundary() }
        isEmpty = false
        switch type.rawValue {
        case 1, 2, 5:
            hasVCL = true
            if let slice = decision.picture {
                if slice.redundantPicCnt == 0 {
                    lastSlice = slice
                    if slice.firstMbInSlice == 0 { sawPrimaryMbZero = true }
                }
                if firstPPSId == nil { firstPPSId = slice.picParameterSetId }
            } else {
                lastSlice = nil
            }
            if let firstMb = decision.firstMb { lastFirstMb = firstMb }
        case 3, 4:
            hasVCL = true
        case 10:
            closedByEndOfSequence = true
        case 11:
            closedByEndOfStream = true
        default:
            break
        }
    }
}
