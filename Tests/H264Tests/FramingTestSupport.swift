import Foundation
@testable import H264
import H264TestSupport
import MediaCore

/// The NAL units of whole-buffer parsing, as bytes.
func nalUnitBytes(_ bytes: [UInt8]) -> [[UInt8]] {
    AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }
}

