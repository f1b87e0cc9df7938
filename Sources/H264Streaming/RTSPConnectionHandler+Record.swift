import H264
import NIOCore
import RTP
import RTSPMessages

/// The requests of a publisher (ANNOUNCE, SETUP with `mode=record`, RECORD) on a record path.
extension RTSPConnectionHandler {
    /// ANNOUNCE: takes the path's publishing slot for the stream the SDP describes (453 while
    /// another connection holds it).
    func announce(_ request: RTSPRequest, path: String, recording box: NIOLoopBoundBox<RTSPRecording>, cSeq: String?,
                  context: ChannelHandlerContext) -> RTSPResponse {
        guard session == nil else { return RTSPResponse(status: .methodNotValidInThisState, cSeq: cSeq) }
        let description: SessionDescription
        do {
            description = try SessionDescription(parsingVideo: String(decoding: request.body, as: UTF8.self))
        } catch {
            log("RTSP \(address(context)): ANNOUNCE: the SDP: \(error)")
            return RTSPResponse(status: .badRequest, cSeq: cSeq)
        }
        do {
            guard try box.value.announce(description, by: identity) else {
                log("RTSP \(address(context)): ANNOUNCE refused: another publisher holds \(path)")
                return RTSPResponse(status: .notEnoughBandwidth, cSeq: cSeq)
            }
        } catch {
            log("RTSP \(address(context)): ANNOUNCE: \(error)")
            return RTSPResponse(status: .badRequest, cSeq: cSeq)
        }
        announced = (request.uri, description, box)
        let codec = description.codec == .hevc ? "H.265 (" : "H.264 (packetization-mode \(description.packetizationMode), "
        log("RTSP \(address(context)): announced \(codec)\(description.parameterSets.count) parameter sets in the SDP)")
        return RTSPResponse(status: .ok, cSeq: cSeq)
    }

    /// SETUP of the announced track with `mode=record` (455 before ANNOUNCE or while recording;
    /// 404 for another track).
    func setupRecord(_ request: RTSPRequest, cSeq: String?, context: ChannelHandlerContext) -> RTSPResponse? {
        guard let announced, !announced.recording.value.isRecording else {
            return RTSPResponse(status: .methodNotValidInThisState, cSeq: cSeq)
        }
        // The H.264 track's control URL, resolved against the ANNOUNCE's URI (RFC 2326 appendix C.1.1).
        let track = RTSPURI.resolve(announced.description.control, against: announced.uri)
        let audioTrack = announced.description.audio?.control.map { RTSPURI.resolve($0, against: announced.uri) }
        let isAudio = audioTrack.map { RTSPURI.path(of: request.uri) == RTSPURI.path(of: $0) } ?? false
        guard isAudio || RTSPURI.path(of: request.uri) == RTSPURI.path(of: track) else { return RTSPResponse(status: .notFound, cSeq: cSeq) }
        let path = RTSPMounts.normalized(String(RTSPURI.path(of: announced.uri)))
        return setup(request, path: path, mode: .record(announced.recording), audio: isAudio, cSeq: cSeq, context: context)
    }

    /// RECORD: the recording begins (455 before SETUP).
    func record(cSeq: String?, context: ChannelHandlerContext) -> RTSPResponse {
        guard let session, let recording = session.recording else { return RTSPResponse(status: .methodNotValidInThisState, cSeq: cSeq) }
        if !recording.isRecording {
            // UDP packets sent before a TEARDOWN may arrive after it: wait for a while without one.
            recording.record(by: identity, lingering: session.udp == nil ? .zero : configuration.lingering,
                             remoteAddress: context.channel.remoteAddress)
            log("recording from \(address(context)) (session \(session.id), " + (session.udp.map {
                "RTP on udp port \($0.rtp.localAddress?.port ?? 0)"
            } ?? "RTP on interleaved channel \(session.channels.lowerBound)") + ")")
            events.yield(.sessionRecording(session: session.id))
        }
        return RTSPResponse(status: .ok, cSeq: cSeq, headers: sessionHeader)
    }
}
