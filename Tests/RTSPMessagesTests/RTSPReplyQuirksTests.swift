import MediaCore
import H264TestSupport
import Testing
import RTSPMessages

/// What cameras send an RTSP client, read as FFmpeg and VLC read it: each case names its public
/// source, and every chunking of the bytes gives the same messages.
@Suite(.ownThread) struct RTSPReplyQuirksTests {
    /// The messages a client's reader gets from `bytes` fed in chunks of `chunk` bytes, and the
    /// bytes it skipped as junk.
    static func read(_ bytes: [UInt8], chunk: Int) throws -> (messages: [RTSPMessageReader.Message], skipped: Int) {
        var reader = RTSPMessageReader(resynchronizing: true)
        var messages: [RTSPMessageReader.Message] = []
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            reader.append(bytes[start..<min(start + chunk, bytes.count)])
            while let message = try reader.next() { messages.append(message) }
        }
        return (messages, reader.skippedByteCount)
    }

    static func frame(channel: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [UInt8(ascii: "$"), channel, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)] + payload
    }

    static let rtp: [UInt8] = [0x80, 0x60, 0x00, 0x01, 0, 0, 0, 1, 0, 0, 0, 7, 0x65, 0x88]

    /// bluenviron/gortsplib#653 (a Canon VB-H47 behind Axis firmware): garbage between two
    /// interleaved frames, including a `$` whose "frame" is not RTP; then a reply.
    @Test(arguments: [1, 3, 7, 1000])
    func garbageBetweenInterleavedFramesIsSkipped(chunk: Int) throws {
        let garbage: [UInt8] = [0x1D, 0xC4, 0x24, 0x01, 0x00, 0x04, 0x11, 0xE9, 0xDB, 0x0D, 0x0A, 0xCA, 0x52, 0x54, 0x00]
        let reply = Array("RTSP/1.0 200 OK\r\nCSeq: 5\r\n\r\n".utf8)
        let bytes = Self.frame(channel: 0, Self.rtp) + garbage + Self.frame(channel: 0, Self.rtp) + garbage + reply
        let (messages, skipped) = try Self.read(bytes, chunk: chunk)
        #expect(messages.count == 3)
        #expect(messages.prefix(2).allSatisfy { $0 == .interleavedFrame(channel: 0, payload: Self.rtp) })
        guard case .response(let response) = messages.last else { Issue.record("no reply: \(messages)"); return }
        #expect(response.status.code == 200 && response.header("CSeq") == "5")
        #expect(skipped == 2 * (garbage.count - 2), "every byte of the garbage but its CR and LF")
    }

    /// koush/scrypted#2137 (Luma x20 cameras): a header line of one space in the PLAY reply, and
    /// gortsplib#807: a status line without a reason phrase.
    @Test(arguments: [1, 1000])
    func aBlankContinuationLineAndNoReasonPhrase(chunk: Int) throws {
        let bytes = Array(("RTSP/1.0 200\r\nServer: Customer RTSP Server/1.0.0\r\nCSeq: 6\r\nSession: 821724453759789\r\n \r\n"
            + "RTP-Info: url=rtsp://192.168.2.236:554/profile1/track1;seq=56350;rtptime=1173786446\r\n\r\n").utf8)
            + Self.frame(channel: 1, [0x80, 0xC8, 0x00, 0x06])
        let (messages, skipped) = try Self.read(bytes, chunk: chunk)
        guard case .response(let response) = messages.first else { Issue.record("no reply: \(messages)"); return }
        #expect(response.status.code == 200 && response.status.reasonPhrase.isEmpty)
        #expect(response.header("Session") == "821724453759789" && response.header("RTP-Info")?.hasPrefix("url=") == true)
        #expect(messages.count == 2 && skipped == 0)
    }

    /// membraneframework/membrane_rtsp#54 (a Reolink camera): RTP and RTCP frames before the
    /// PLAY reply; and a request the server sends the client (a camera's SET_PARAMETER).
    @Test func framesBeforeTheReplyAndARequestFromTheServer() throws {
        let bytes = Self.frame(channel: 0, Self.rtp) + Self.frame(channel: 1, [0x80, 0xC8, 0x00, 0x06])
            + Array("RTSP/1.0 200 OK\r\nCSeq: 4\r\n\r\nSET_PARAMETER rtsp://cam/ RTSP/1.0\r\nCSeq: 1\r\n\r\n".utf8)
        let (messages, skipped) = try Self.read(bytes, chunk: 5)
        #expect(messages.count == 4 && skipped == 0)
        if case .request(let request) = messages.last { #expect(request.method == "SET_PARAMETER") } else { Issue.record("\(messages)") }
    }

    /// A server's reader does not skip: what is not a request is a malformed request, answered 400.
    @Test func aServersReaderStillAnswersGarbage() throws {
        var reader = RTSPMessageReader()
        reader.append(Array("\u{1}garbage\r\n\r\n".utf8))
        guard case .malformedRequest = try reader.next() else { Issue.record("not reported"); return }
        #expect(reader.skippedByteCount == 0)
    }

    /// scottlamb/moonfire-nvr#224 (OMNY M5S2A): a negative `rtptime`; an unreadable `seq`; and
    /// scottlamb/retina#117 (Laureii): a trailing semicolon. Unreadable values are left out with
    /// a warning (field, offset in the value); nothing throws.
    @Test func rtpInfoWithBogusValues() {
        let value = "url=rtsp://10.98.66.32:554/1/1/trackID=0;seq=abc;rtptime=-426852246;"
        let info = RTSPRTPInfo(parsing: value)
        #expect(info.streams == [RTSPRTPInfo.Stream(url: "rtsp://10.98.66.32:554/1/1/trackID=0")])
        #expect(info.warnings.map { $0.field ?? "" } == ["RTP-Info seq", "RTP-Info rtptime"])
        #expect(info.warnings.map { $0.byteOffset ?? -1 } == [41, 49])
        #expect(info.warnings.allSatisfy { $0.code == .invalidRTSPHeader })
        let laureii = RTSPRTPInfo(parsing: "url=rtsp://192.168.1.19:554/0/main/trackID=0;seq=0;rtptime=0;")
        #expect(laureii.streams == [RTSPRTPInfo.Stream(url: "rtsp://192.168.1.19:554/0/main/trackID=0", sequenceNumber: 0, rtpTime: 0)])
        #expect(laureii.warnings.isEmpty)
        let garbage = RTSPRTPInfo(parsing: ";;,seq,=;url")
        #expect(garbage.streams.count == 2 && garbage.warnings.count == 4, "\(garbage.warnings)")
    }

    /// Which entry is the track's: by URL (absolute, or relative as Wowza sends it); retina's
    /// test data of a GW Security GW4089IP names another URL than the track's: with one stream
    /// and one entry it is taken, with a warning; with no match among several, none.
    @Test func rtpInfoEntryOfTheTrack() {
        var warnings: [MediaError] = []
        let two = RTSPRTPInfo(parsing: "url=trackID=1;seq=1;rtptime=5,url=rtsp://cam/vod/trackID=2;seq=9;rtptime=7")
        #expect(two.stream(for: "rtsp://cam/vod/trackID=1", warnings: &warnings)?.rtpTime == 5)
        #expect(two.stream(for: "rtsp://cam/vod/trackID=2/", warnings: &warnings)?.sequenceNumber == 9)
        #expect(warnings.isEmpty)
        #expect(two.stream(for: "rtsp://cam/vod/trackID=3", streamCount: 1, warnings: &warnings) == nil)
        let gw = RTSPRTPInfo(parsing: "url=rtsp://192.168.1.110:5050/H264/video;seq=271;rtptime=1621990950")
        let taken = gw.stream(for: "rtsp://192.168.1.110:5049/H264?channel=1&subtype=1&unicast=true&proto=Onvif/trackID=1", warnings: &warnings)
        #expect(taken?.sequenceNumber == 271)
        #expect(warnings.map { $0.field ?? "" } == ["RTP-Info url", "RTP-Info url"])
        #expect(RTSPRTPInfo(parsing: "").stream(for: "rtsp://cam/x", warnings: &warnings) == nil && warnings.count == 2)
    }
}

