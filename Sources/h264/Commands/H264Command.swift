import ArgumentParser

@main
struct H264Command: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "h264",
        abstract: "Encode, decode, transcode, inspect, convert, serve, receive and relay H.264 streams.",
        subcommands: [EncodeCommand.self, DecodeCommand.self, TranscodeCommand.self, InspectCommand.self, ConvertCommand.self,
                      ServeCommand.self, ReceiveCommand.self, RelayCommand.self]
    )
}
