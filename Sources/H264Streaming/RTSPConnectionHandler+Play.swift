import H264
import HEVC
import NIOCore
import RTP
import RTSPMessages

/// The requests of a viewer (DESCRIBE, PLAY, PAUSE) and its joining and leaving the mount's
/// ``Broadcaster``.
extension RTSPConnectionHandler {
    /// The presentation's URI as the client names it, with a trailing `/` (the Content-Base):
    /// the URI's scheme and authority, and the mount path.
    static func base(of uri: String, mountPath: String) -> String {
        let path = RTSPURI.path(of: uri)
        let prefix = uri[..<path.startIndex]
        return prefix + mountPath + "/"
    }

    /// DESCRIBE: the SDP of `mount`'s stream (`H264` or `H265`), its track `track1`.
    func describe(_ request: RTSPRequest, path: String, mount: RTSPMounts.Mount, cSeq: String?) -> RTSPResponse {
        let base = Self.base(of: request.uri, mountPath: path)
        let sdp = SessionDescription(format: mount.format, sessionName: "h264 serve", address: "0.0.0.0", port: 0).text
            + "a=control:track1\r\n"
        return RTSPResponse(status: .ok, cSeq: cSeq, headers: [("Content-Base", base), ("Content-Type", "application/sdp")],
                            body: Array(sdp.utf8))
    }

    /// PLAY: RTP-Info maps the stream's first RTP timestamp to the start of play; the viewer
    /// joins the broadcaster once the answer is written.
    func play(_ request: RTSPRequest, cSeq: String?, context: ChannelHandlerContext) -> RTSPResponse {
        guard var current = session, current.mount != nil else { return RTSPResponse(status: .methodNotValidInThisState, cSeq: cSeq) }
        if current.broadcasterId == nil {
            current.clock = RTSPPlayClock(playStart: .now)
            session = current
        }
        let rtpInfo = "url=\(Self.base(of: request.uri, mountPath: current.mountPath))track1;seq=\(current.packetizer.nextSequenceNumber);"
            + "rtptime=\(current.packetizer.timestamp(for: .zero))"
        let response = RTSPResponse(status: .ok, cSeq: cSeq, headers: sessionHeader + [("Range", "npt=0.000-"), ("RTP-Info", rtpInfo)])
        // The answer goes out first; the frames (written through the channel, after it) follow.
        joinAfterAnswer = current.broadcasterId == nil
        return response
    }

    /// Joins the session's broadcaster (after PLAY's answer).
    func join(context: ChannelHandlerContext) {
        joinAfterAnswer = false
        guard let id = session?.id, let broadcaster = session?.mount?.broadcaster else { return }
        let client = broadcaster.add(context.channel)
        session?.broadcasterId = client
        log("RTSP \(address(context)): session \(id) plays as client \(client)")
        events.yield(.sessionPlaying(session: id, client: client))
    }

    /// Leaves the broadcaster (PAUSE, or the session's end).
    func leaveBroadcast() {
        if let id = session?.broadcasterId { session?.mount?.broadcaster.remove(id) }
        session?.broadcasterId = nil
    }
}
