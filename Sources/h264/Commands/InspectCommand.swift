import ArgumentParser
import Foundation
import H264
import MediaContainers

/// `h264 inspect FILE`: the NAL units, access units and parameter sets of a stream, as tables or JSON.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "List NAL units, access units and parameter sets of H.264/H.265.",
        discussion: """
        FILE: Annex-B ('-' for standard input), or AVCC with --config or --length-size; an FLV or MP4 file or an SDP: \
        its tracks. --json prints one object (access_units, vps, sps, pps, diagnostics). Out-of-range values \
        and damaged NAL units are warnings (exit status 0), or errors with --strict (exit status 1).
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
            if config == nil, lengthSize == nil, let listing = try TrackListing(bytes: bytes) {
                if json {
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys]
                    print(String(decoding: try encoder.encode(listing), as: UTF8.self))
                } else {
                    print(listing.table())
                }
                return
            }
            let record = try config.map(CLIIO.readConfiguration)
            let inspection = try CLIError.named(name) { () throws(MediaError) in
                try AnyStreamInspection(bytes: bytes, configurationRecord: record, lengthSize: lengthSize)
            }
            try CLIIO.report(inspection.diagnostics.map(\.error), file: name, command: "inspect", strict: strict.strict)
            print(json ? inspection.json() : inspection.table())
        }
    }
}
