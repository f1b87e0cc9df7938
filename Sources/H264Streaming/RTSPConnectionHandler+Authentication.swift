import H264
import Logging
import NIOCore
import RTSPMessages

extension RTSPConnectionHandler {
    /// The `401 Unauthorized` for `request` when the path it names (`path`, the mount path it
    /// resolved to; nil: none) needs credentials it does not carry (`RTSPServerAuthenticator`);
    /// nil: let it through. The path's own ``RTSPServer/Authentication`` applies, else the
    /// server's; a request for no mounted path is checked against the server's, so a
    /// protected server does not tell which paths exist.
    ///
    /// OPTIONS needs no credentials: FFmpeg and GStreamer send it first, as does a keepalive,
    /// it says only which methods exist, and gst-rtsp-server and live555 answer it alike.
    /// Neither does a GET_PARAMETER naming this connection's session: a keepalive of a session
    /// only an authorized SETUP could have made, which must not fail when its nonce expires. A
    /// request without CSeq is left to the preamble (400).
    func refusal(of request: RTSPRequest, path: String?, context: ChannelHandlerContext) -> RTSPResponse? {
        guard request.cSeq != nil, request.method != "OPTIONS" else { return nil }
        if request.method == "GET_PARAMETER", let named = request.session, named == session?.id { return nil }
        guard let authentication = path.flatMap(mounts.authentication(at:)) ?? configuration.authentication else { return nil }
        let authenticator = RTSPServerAuthenticator(authentication: authentication, nonces: nonces)
        switch authenticator.check(request, path: path ?? "/", at: .now) {
        case .allowed:
            return nil
        case .refused(let response, let reason):
            // Asking is the first step of every client; a refused answer is worth a line.
            let level: Logger.Level = request.header("Authorization") == nil ? .debug : .info
            logger.log(level: level, "RTSP \(address(context)): 401 for \(request.method) (\(reason))")
            return response
        }
    }
}
