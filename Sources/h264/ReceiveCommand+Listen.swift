extension ReceiveCommand {
    /// `h264 receive --listen rtsp://HOST:PORT/PATH -o OUT.h264`: waits for one publisher
    /// (RTSP ANNOUNCE, SETUP with `mode=record`, RECORD) and writes its stream like the other
    /// modes; see `RTSPRecordServer` and `RTSPRecordHandler`.
    func receiveListening() throws {
        guard sdp.lowercased().hasPrefix("rtsp://") else {
            throw CLIError("--listen wants an rtsp:// URL to listen on, not \(sdp)")
        }
        installStopHandlers()
        try RTSPRecordServer.record(url: sdp, command: self)
    }
}
