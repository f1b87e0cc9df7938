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
        var description = SessionDescription(format: mount.format, sessionName: "h264 serve", address: "0.0.0.0", port: 0)
        description.control = "track1"
        description.audio = mount.audio
        let sdp = description.text
        return RTSPResponse(status: .ok, cSeq: cSeq, headers: [("Content-Base", base), ("Content-Type", "application/sdp")],
                            body: Array(sdp.utf8))
    }

    /// PLAY: the viewer joins the broadcaster once the answer is written. RTP-Info names the
    /// track only: the viewer's first packet is the stream's (a keyframe still to come, or the
    /// kept GOP's first), whose number and timestamp the player takes from the packet itself,
    /// as it does from a camera that sends no `seq` or `rtptime` (RFC 2326 §12.33 makes both optional).
    func play(_ request: RTSPRequest, cSeq: String?, context: ChannelHandlerContext) -> RTSPResponse {
        guard let current = session, current.mount != nil else { return RTSPResponse(status: .methodNotValidInThisState, cSeq: cSeq) }
        let base = Self.base(of: request.uri, mountPath: current.mountPath)
        let rtpInfo = (current.takesVideo ? ["url=\(base)track1"] : []) + (current.audio != nil ? ["url=\(base)track2"] : [])
        let response = RTSPResponse(status: .ok, cSeq: cSeq, headers: sessionHeader + [("Range", "npt=0.000-"), ("RTP-Info", rtpInfo.joined(separator: ","))])
        // The answer goes out first; the frames (written through the channel, after it) follow.
        joinAfterAnswer = current.broadcasterId == nil
        return response
    }

    /// Joins the session's broadcaster (after PLAY's answer).
    func join(context: ChannelHandlerContext) {
        joinAfterAnswer = false
        guard let id = session?.id, let broadcaster = session?.mount?.broadcaster else { return }
        viewerContext = context
        let client = broadcaster.add(context.channel, kind: .rtp, viewer: self,
                                     tracks: (session?.takesVideo ?? true, session?.audio != nil))
        session?.broadcasterId = client
        log("RTSP \(address(context)): session \(id) plays as client \(client)")
        events.yield(.sessionPlaying(session: id, client: client))
    }

    /// Leaves the broadcaster (PAUSE, or the session's end).
    func leaveBroadcast() {
        if let id = session?.broadcasterId { session?.mount?.broadcaster.remove(id) }
        session?.broadcasterId = nil
        viewerContext = nil
    }
}
