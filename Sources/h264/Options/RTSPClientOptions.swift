import ArgumentParser
import H264Streaming

/// How `h264 receive rtsp://…` plays a camera: the transport and the credentials.
struct RTSPClientOptions: ParsableArguments {
    /// The lower transport `--transport` asks an RTSP server for.
    enum Transport: String, ExpressibleByArgument, CaseIterable { case auto, tcp, udp }

    @Option(help: "With an rtsp:// URL: the RTP transport, auto (UDP, then TCP interleaved if the server answers 461), tcp or udp.")
    var transport: Transport = .auto
    @Option(help: "With an rtsp:// URL: the user name for a server that asks for one (401); or give rtsp://USER:PASSWORD@HOST/….")
    var user: String?
    @Option(help: "With an rtsp:// URL: the password of --user.") var password: String?

    func validate() throws {
        if password != nil && user == nil { throw ValidationError("--password needs --user") }
    }

    /// The client configuration these options ask for.
    var configuration: RTSPClient.Configuration {
        var configuration = RTSPClient.Configuration()
        configuration.transport = switch transport {
        case .auto: .automatic
        case .tcp: .tcp
        case .udp: .udp
        }
        configuration.credentials = user.map { RTSPCredentials(user: $0, password: password ?? "") }
        return configuration
    }
}
