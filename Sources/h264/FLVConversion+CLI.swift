import ArgumentParser
import H264
import H264Media

extension FLVConversion {
    /// `--flv-syntax`: which FLV video tag syntax `--to flv` writes.
    enum SyntaxOption: String, ExpressibleByArgument, CaseIterable {
        /// Legacy FLV tags (CodecID 7).
        case legacy
        /// Enhanced RTMP v2 tags (FourCC avc1).
        case enhanced

        var syntax: FLVVideoTag.Syntax { self == .legacy ? .legacy : .enhanced }
    }

    /// The `convert` command's FLV cases: Annex-B → FLV (`--to flv`), FLV → Annex-B (damaged
    /// tags skipped and reported as warnings; with `strict`, errors and nothing written).
    static func run(to target: ConvertCommand.Target, _ bytes: [UInt8], name: String, output: String,
                    frameRate: Double?, syntax: SyntaxOption, strict: Bool) throws {
        if let frameRate, !(frameRate.isFinite && frameRate > 0) {
            throw CLIError("--fps \(frameRate) must be a positive number")
        }
        let converted: [UInt8]
        var diagnostics: [H264Error] = []
        do throws(H264Error) {
            if target == .flv {
                converted = try flv(fromAnnexB: bytes, frameRate: frameRate, syntax: syntax.syntax)
            } else {
                (converted, diagnostics) = try annexB(fromFLV: bytes)
            }
        } catch {
            throw CLIError(file: name, error)
        }
        // Damaged tags and warnings, as `h264 convert` reports the stream's: with --strict, fail.
        try CLIIO.report(diagnostics, file: name, command: "convert", strict: strict)
        try CLIIO.write(converted, to: output)
    }
}
