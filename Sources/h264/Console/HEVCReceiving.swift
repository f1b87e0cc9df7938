import Foundation
import H264
import H264Media
import H264Streaming

extension ReceiveOptions {
    /// `h264 receive rtsp://… -o OUT.265` of an H.265 stream (`RTSPClient.codec`): Annex-B from
    /// the first IRAP picture, the SDP's VPS, SPS and PPS before each that carries none
    /// (`ReceivedAnnexBWriter`); decoding it is `h264 decode`'s.
    func receiveHEVC(from client: RTSPClient) async throws {
        guard !decodesOutput && decoded == nil else { throw CLIError("\(client.url): an H.265 stream is written as Annex-B (-o FILE.265); decode that with h264 decode") }
        let out = try CLIIO.openOutput(output)
        defer { if out !== FileHandle.standardOutput { try? out.close() } }
        var writer = ReceivedAnnexBWriter(hevcParameterSets: client.sessionDescription.parameterSets)
        log("playing \(client.url) (H.265, session \(client.session))")
        try await StopSignal.catching(onStop: client.close) {
            for await event in client {
                switch event {
                case .hevcAccessUnit(let received, _):
                    guard writer.take(received.accessUnit) else { continue }
                    out.write(Data(try writer.annexB(received.accessUnit)))
                    if let frames, writer.written >= frames { return }
                case .loss(let loss): log("lost \(loss.packetCount) packet(s) from sequence number \(loss.firstSequenceNumber)")
                case .diagnostic(let error): log(String(describing: error))
                default: continue
                }
            }
        }
        let s = client.statistics
        log("wrote \(writer.written) access units (\(writer.skipped) before the first IRAP picture skipped); "
            + "\(s.packets) packets, \(s.lostPackets) lost, \(s.droppedAccessUnits) access units dropped")
    }
}
