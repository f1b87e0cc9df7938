import ArgumentParser
import H264
import MediaContainers

extension FLVConversion {
    /// `--flv-syntax`: which FLV video tag syntax `--to flv` writes.
    enum SyntaxOption: String, ExpressibleByArgument, CaseIterable {
        /// Legacy FLV tags (CodecID 7).
        case legacy
        /// Enhanced RTMP v2 tags (FourCC avc1).
        case enhanced

        var syntax: FLVVideoTag.Syntax { self == .legacy ? .legacy : .enhanced }
    }
}
