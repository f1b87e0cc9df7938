import ArgumentParser
import Foundation
import H264
import H264Media

struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert between Annex-B byte streams and AVCC (length-prefixed) streams.",
        discussion: """
        --to avcc reads Annex-B and writes length-prefixed NAL units; with --parameter-sets config \
        the SPS and PPS move out of the stream into the avcC written to --config-out. \
        --to annexb reads AVCC (lengths of --length-size bytes, or the size the --config avcC names) \
        and writes a byte stream with start codes, inserting the avcC's SPS and PPS before each IDR \
        access unit that lacks them.
        Values out of range that do not change how the rest is read, and damaged NAL units, do not \
        stop the conversion (every NAL unit is carried over as it is): each is printed once on \
        standard error as a warning, as `h264 inspect` finds it (exit status 0), or as an error with \
        --strict (exit status 1, nothing written).
        """
    )

    enum Target: String, ExpressibleByArgument, CaseIterable {
        case avcc, annexb, flv
    }

    enum Placement: String, ExpressibleByArgument, CaseIterable {
        case inband, config
    }

    @Option(help: "The output framing: avcc, annexb or flv (a video-only FLV file; FLV input to annexb is read as FLV).")
    var to: Target

    @Argument(help: "The input stream ('-' for standard input).")
    var input: String

    @Option(name: .shortAndLong, help: "The output file ('-' for standard output).")
    var output: String

    @Option(help: "An avcC file describing AVCC input (its length size and parameter sets).")
    var config: String?

    @Option(help: "Write the stream's avcC (AVCDecoderConfigurationRecord) to this file.")
    var configOut: String?

    @Option(help: "NAL unit length size in bytes (1, 2 or 4): of the AVCC output, or of AVCC input without --config.")
    var lengthSize: Int?

    @Option(help: "With --to avcc: keep SPS/PPS in the stream (inband) or move them into the avcC (config).")
    var parameterSets: Placement = .inband

    @Option(help: "With --to flv: frames per second for the tag timestamps (default: the SPS's VUI timing, else 25).")
    var fps: Double?

    @Option(help: "With --to flv: legacy FLV tags (CodecID 7) or enhanced (Enhanced RTMP, FourCC avc1).")
    var flvSyntax: FLVConversion.SyntaxOption = .legacy

    @Flag(help: "Treat every warning (a value kept out of range, a damaged unit) as an error: write nothing.")
    var strict = false

    /// Prints what `h264 inspect` would warn about in the input; with --strict, fails.
    private func reportDiagnostics(_ bytes: [UInt8], name: String, record: AVCDecoderConfigurationRecord?, lengthSize: Int?) throws {
        let inspection: StreamInspection
        do throws(H264Error) {
            inspection = try StreamInspection(bytes: bytes, configurationRecord: record, lengthSize: lengthSize)
        } catch {
            throw CLIError(file: name, error)
        }
        try CLIIO.report(inspection.diagnostics.map(\.error), file: name, command: "convert", strict: strict)
    }

    func validate() throws {
        if let lengthSize, ![1, 2, 4].contains(lengthSize) {
            throw ValidationError("--length-size must be 1, 2 or 4")
        }
        if to == .avcc && parameterSets == .config && configOut == nil {
            throw ValidationError("--parameter-sets config needs --config-out to keep the parameter sets")
        }
        if to == .annexb && config == nil && lengthSize == nil && !input.lowercased().hasSuffix(".flv") {
            throw ValidationError("AVCC input needs --config FILE.avcC or --length-size N")
        }
    }

    func run() throws {
        try runReportingErrors(command: "convert") {
            let bytes = try CLIIO.read(input)
            let name = input == "-" ? "<stdin>" : input
            if to == .flv || (to == .annexb && FLVConversion.isFLV(bytes)) {
                try FLVConversion.run(to: to, bytes, name: name, output: output, frameRate: fps, syntax: flvSyntax, strict: strict)
                return
            }
            switch to {
            case .flv:
                return
            case .avcc:
                let result: AVCC.ConversionResult
                do throws(H264Error) {
                    result = try AVCC.fromAnnexB(bytes, lengthSize: lengthSize ?? 4,
                                                 parameterSets: parameterSets == .config ? .configuration : .inBand)
                } catch {
                    throw CLIError(file: name, error)
                }
                try reportDiagnostics(bytes, name: name, record: nil, lengthSize: nil)
                try CLIIO.write(result.data, to: output)
                if let configOut {
                    let record: AVCDecoderConfigurationRecord
                    do throws(H264Error) {
                        record = try AVCDecoderConfigurationRecord(sequenceParameterSets: result.sequenceParameterSets,
                                                                   pictureParameterSets: result.pictureParameterSets,
                                                                   nalUnitLengthSize: lengthSize ?? 4)
                    } catch {
                        throw CLIError(file: name, error)
                    }
                    do {
                        try CLIIO.write(try record.serialized(), to: configOut)
                    } catch let error as H264Error {
                        throw CLIError(file: configOut, error)
                    }
                }
            case .annexb:
                let record = try config.map(CLIIO.readConfiguration)
                let size = lengthSize ?? record?.nalUnitLengthSize ?? 4
                let converted: [UInt8]
                do throws(H264Error) {
                    converted = try AnnexB.fromAVCCStream(bytes, lengthSize: size, parameterSets: record)
                } catch {
                    throw CLIError(file: name, error)
                }
                try reportDiagnostics(bytes, name: name, record: record, lengthSize: size)
                try CLIIO.write(converted, to: output)
                if let configOut, let record {
                    do {
                        try CLIIO.write(try record.serialized(), to: configOut)
                    } catch let error as H264Error {
                        throw CLIError(file: configOut, error)
                    }
                }
            }
        }
    }
}
