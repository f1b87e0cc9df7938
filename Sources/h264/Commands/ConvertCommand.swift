import ArgumentParser
import Foundation
import H264
import MediaContainers
import HEVC

/// `h264 convert INPUT -o OUTPUT`: between Annex-B, AVCC, FLV and MP4; the output's form
/// follows its extension (`.mp4`, `.m4v`, `.mov`, `.flv`, `.264`/`.h264`/`.265`/`.hevc`, `.m3u8`), `--to`
/// says it where an extension cannot.
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert between Annex-B, AVCC/HVCC, FLV and MP4, or to HLS VOD.",
        discussion: """
        The output's form follows its extension (.mp4, .flv, .264/.265: Annex-B, .m3u8: HLS), else --to; MP4 \
        and FLV input are told by their content. Damaged NAL units are carried over with a warning (errors \
        with --strict, nothing written).
        """
    )

    enum Target: String, ExpressibleByArgument, CaseIterable {
        case avcc, annexb, flv, mp4, hls

        /// The form an output's extension names, if it names one.
        init?(extensionOf path: String) {
            switch (path as NSString).pathExtension.lowercased() {
            case "mp4", "m4v", "mov", "cmfv": self = .mp4
            case "flv": self = .flv
            case "m3u8": self = .hls
            case "264", "h264", "265", "h265", "hevc", "annexb": self = .annexb
            default: return nil
            }
        }
    }
    enum Placement: String, ExpressibleByArgument, CaseIterable { case inband, config }

    @Option(help: "The output's form when its extension does not say it: avcc, annexb, flv, mp4 or hls.") var to: Target?
    @Flag(help: "With an MP4 output: fragmented MP4 (an init segment, then a fragment per GOP), as CMAF and HLS use it.")
    var fragmented = false
    @Argument(help: "The input stream ('-' for standard input).") var input: String
    @OptionGroup var out: OutputOption
    @Option(help: "An avcC file describing AVCC input (its length size and parameter sets).") var config: String?
    @Option(help: "Write the stream's avcC (AVCDecoderConfigurationRecord) to this file.") var configOut: String?
    @Option(help: "NAL unit length size in bytes (1, 2 or 4): of the AVCC output, or of AVCC input without --config.") var lengthSize: Int?
    @Option(help: "With --to avcc: keep SPS/PPS in the stream (inband) or move them into the avcC (config).") var parameterSets: Placement = .inband
    @Option(help: "With --to flv: frames per second for the tag timestamps (default: the SPS's VUI timing, else 25).") var fps: Double?
    @Option(help: "With --to flv: legacy FLV tags (CodecID 7) or enhanced (Enhanced RTMP, FourCC avc1).")
    var flvSyntax: FLVConversion.SyntaxOption = .legacy
    @Option(help: "With an .m3u8 output: the target duration of an HLS segment in seconds (it ends at the first keyframe past it).")
    var hlsSegmentDuration: Double = 2
    @OptionGroup var strict: StrictFlag

    /// The output's form: `--to`, else the output's extension.
    var target: Target { to ?? Target(extensionOf: out.output) ?? .avcc }

    func validate() throws {
        if to == nil && Target(extensionOf: out.output) == nil {
            throw ValidationError("say the output's form with --to avcc|annexb|flv|mp4, or give the output an extension (.mp4, .flv, .264, .265)")
        }
        if fragmented && target != .mp4 { throw ValidationError("--fragmented is for an MP4 output") }
        if target == .hls && (out.output == "-" || !out.output.lowercased().hasSuffix(".m3u8")) {
            throw ValidationError("an HLS output is a playlist file (-o DIR/index.m3u8): its segments are written beside it")
        }
        if !(hlsSegmentDuration.isFinite && hlsSegmentDuration > 0) { throw ValidationError("--hls-segment-duration must be positive") }
        if target == .mp4 && out.output == "-" { throw ValidationError("an MP4 output is a file (-o FILE.mp4): its index is written last") }
        if let lengthSize, ![1, 2, 4].contains(lengthSize) { throw ValidationError("--length-size must be 1, 2 or 4") }
        if target == .avcc && parameterSets == .config && configOut == nil {
            throw ValidationError("--parameter-sets config needs --config-out to keep the parameter sets")
        }
        if target == .annexb && config == nil && lengthSize == nil && !input.lowercased().hasSuffix(".flv") && !Self.isMP4Name(input) {
            throw ValidationError("AVCC input needs --config FILE.avcC or --length-size N")
        }
    }

    func run() throws {
        try runReportingErrors(command: "convert") {
            let name = input == "-" ? "<stdin>" : input
            let to = target
            if to == .hls { return try convertToHLS(name: name) }
            if try convertStreaming(to: to, name: name) { return }
            let bytes = try CLIIO.read(input)
            if to == .mp4 { return try convertToMP4(bytes, name: name) }
            if to == .annexb && MP4Reader.isMP4(bytes) { return try convertFromMP4(bytes, name: name) }
            if to == .flv || (to == .annexb && FLVConversion.isFLV(bytes)) { return try convertFLV(bytes, name: name) }
            if try convertHEVC(bytes, name: name) { return }
            let record = to == .annexb ? try config.map(CLIIO.readConfiguration) : nil
            let size = lengthSize ?? record?.nalUnitLengthSize ?? 4
            let converted = try CLIError.named(name) { () throws(MediaError) in
                guard to == .annexb else {
                    let result = try AVCC.fromAnnexB(bytes, lengthSize: size, parameterSets: parameterSets == .config ? .configuration : .inBand)
                    return (data: result.data, sps: result.sequenceParameterSets, pps: result.pictureParameterSets)
                }
                return (data: try AnnexB.fromAVCCStream(bytes, lengthSize: size, parameterSets: record), sps: [], pps: [])
            }
            // What `h264 inspect` would warn about in the input; with --strict, fail.
            let inspection = try CLIError.named(name) { () throws(MediaError) in
                try StreamInspection(bytes: bytes, configurationRecord: record, lengthSize: to == .avcc ? nil : size)
            }
            try CLIIO.report(inspection.diagnostics.map(\.error), file: name, command: "convert", strict: strict.strict)
            try CLIIO.write(converted.data, to: out.output)
            guard let configOut, to == .avcc || record != nil else { return }
            let written = try record ?? CLIError.named(name) { () throws(MediaError) in
                try AVCDecoderConfigurationRecord(sequenceParameterSets: converted.sps, pictureParameterSets: converted.pps,
                                                  nalUnitLengthSize: size)
            }
            try CLIIO.write(try CLIError.named(configOut) { () throws(MediaError) in try written.serialized() }, to: configOut)
        }
    }

    /// Annex-B H.265 → HVCC (`--to avcc`, the `hvcC` to `--config-out`), HVCC → Annex-B
    /// (`--to annexb` with an `hvcC` as `--config`); false when the input is not H.265.
    private func convertHEVC(_ bytes: [UInt8], name: String) throws -> Bool {
        let record = try target == .annexb ? config.flatMap { HEVCDecoderConfigurationRecord.recognizing(try CLIIO.read($0)) } : nil
        guard record != nil || (target == .avcc && AnnexB.carriesHEVC(bytes)) else { return false }
        guard (lengthSize ?? 4) == 4 || record != nil else { throw CLIError("H.265 is written with 4-byte lengths (--length-size 4)") }
        let converted = try CLIError.named(name) { () throws(MediaError) in
            guard let record else { return try HEVCConversion.hvcc(fromAnnexB: bytes, parameterSetsInBand: parameterSets == .inband) }
            return (try AnnexB.fromHVCC(bytes, lengthSize: lengthSize ?? record.nalUnitLengthSize, configuration: record), record, [])
        }
        try CLIIO.report(converted.diagnostics, file: name, command: "convert", strict: strict.strict)
        try CLIIO.write(converted.hvcc, to: out.output)
        if let configOut, record == nil { try CLIIO.write(converted.configuration.bytes, to: configOut) }
        return true
    }

    /// Annex-B → FLV (`--to flv`), FLV → Annex-B (damaged tags skipped and reported as warnings;
    /// with `--strict`, errors and nothing written).
    private func convertFLV(_ bytes: [UInt8], name: String) throws {
        if let fps, !(fps.isFinite && fps > 0) { throw CLIError("--fps \(fps) must be a positive number") }
        let (converted, diagnostics) = try CLIError.named(name) { () throws(MediaError) in
            target == .flv ? (try FLVConversion.flv(fromAnnexB: bytes, frameRate: fps, syntax: flvSyntax.syntax), [])
                : try FLVConversion.annexB(fromFLV: bytes)
        }
        try CLIIO.report(diagnostics, file: name, command: "convert", strict: strict.strict)
        try CLIIO.write(converted, to: out.output)
    }
}
