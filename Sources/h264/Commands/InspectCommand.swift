import ArgumentParser
import Foundation
import H264
import MediaContainers

/// `h264 inspect FILE`: the NAL units, access units and parameter sets of a stream, as tables or JSON.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "List the NAL units, access units and parameter sets of an H.264 or H.265 stream.",
        discussion: """
        FILE is an Annex-B byte stream, or AVCC (length-prefixed NAL units without container) when \
        --config or --length-size is given. '-' reads standard input.
        With --json, prints one object: {"access_units":[{"offset":…,"bytes":…,"nal_types":[…]},…],\
        "sps":[[["name",value],…],…],"pps":[…],"diagnostics":[{"kind":…,"code":…,"field":…,\
        "byte_offset":…,"bit_offset":…,"message":…},…]} — each distinct SPS and PPS once, in order of \
        first appearance, its syntax elements in bitstream order with the spec's names.
        An H.265 Annex-B stream is told from its NAL unit headers (no flag): the JSON then has a \
        "vps" list too, with FFmpeg's trace_headers names.
        Values out of range that do not change how the rest is read are kept, and damaged NAL units \
        are skipped: each is printed once on standard error as a warning (exit status 0), or as an \
        error with --strict (exit status 1).
        """
    )

    @Argument(help: "The stream to read ('-' for standard input).") var file: String
    @Flag(help: "Print one JSON object instead of tables.") var json = false
    @Option(help: "An avcC (AVCDecoderConfigurationRecord) file: FILE is AVCC with its length size and parameter sets.") var config: String?
    @Option(help: "FILE is AVCC with NAL unit lengths of this many bytes (1, 2 or 4).") var lengthSize: Int?

    @OptionGroup var strict: StrictFlag

    func run() throws {
        try runReportingErrors(command: "inspect") {
            let bytes = try CLIIO.read(file)
            let name = file == "-" ? "<stdin>" : file
            let record = try config.map(CLIIO.readConfiguration)
            let inspection = try CLIError.named(name) { () throws(H264Error) in
                try AnyStreamInspection(bytes: bytes, configurationRecord: record, lengthSize: lengthSize)
            }
            try CLIIO.report(inspection.diagnostics.map(\.error), file: name, command: "inspect", strict: strict.strict)
            print(json ? inspection.json() : inspection.table())
        }
    }
}
