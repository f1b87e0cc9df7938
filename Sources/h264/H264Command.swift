import ArgumentParser

@main
struct H264Command: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "h264",
        abstract: "Encode, inspect and convert H.264 streams.",
        subcommands: [EncodeCommand.self, InspectCommand.self, ConvertCommand.self]
    )
}
