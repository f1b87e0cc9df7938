import MediaCore
import H264TestSupport
import Testing
import RTP
import RTSPMessages

@Suite("RTSP request reader, response writer, Transport header", .ownThread)
struct RTSPMessageReaderTests {
    /// A SETUP in the shape FFmpeg's `-rtsp_transport tcp` client sends it (libavformat/rtsp.c:
    /// request line, CSeq, User-Agent, Transport, Session absent on the first SETUP).
    static let setup = "SETUP rtsp://127.0.0.1:8554/live/track1 RTSP/1.0\r\n"
        + "Transport: RTP/AVP/TCP;unicast;interleaved=0-1\r\nCSeq: 3\r\nUser-Agent: Lavf59.27.100\r\n\r\n"
    static let options = "OPTIONS rtsp://127.0.0.1:8554/live RTSP/1.0\r\nCSeq: 1\r\nUser-Agent: Lavf59.27.100\r\n\r\n"

    /// Every message the reader gives for `bytes` fed in chunks of `chunk` bytes; `inPlace`:
    /// interleaved frames read with `nextInterleavedFrame` (as a client does), the rest with `next()`.
    static func messages(_ bytes: [UInt8], chunk: Int = .max, resynchronizing: Bool = false, inPlace: Bool = false,
                         skipped: Int = 0) throws -> [RTSPMessageReader.Message] {
        var reader = RTSPMessageReader(resynchronizing: resynchronizing)
        var messages: [RTSPMessageReader.Message] = []
        var offset = 0
        while offset < bytes.count {
            let end = offset + min(chunk, bytes.count - offset)
            reader.append(bytes[offset..<end])
            offset = end
            while true {
                if inPlace, let frame = reader.nextInterleavedFrame({ RTSPMessageReader.Message.interleavedFrame(channel: $0, payload: Array($1)) }) {
                    messages.append(frame)
                    continue
                }
                guard let message = try reader.next() else { break }
                messages.append(message)
            }
        }
        #expect(!reader.hasPartialMessage && reader.skippedByteCount == skipped)
        return messages
    }

    @Test func readsRequestsAndInterleavedFramesInAnyChunking() throws {
        let frame: [UInt8] = [0x24, 1, 0, 3, 0x80, 0xC9, 0x00]
        let bytes = Array(Self.options.utf8) + frame + Array(Self.setup.utf8)
            + Array("GET_PARAMETER rtsp://h/live RTSP/1.0\r\nCSeq: 9\r\nContent-Length: 4\r\n\r\nabcd".utf8)
        let whole = try Self.messages(bytes)
        #expect(whole.count == 4)
        guard case .request(let options) = whole[0], case .interleavedFrame(let channel, let payload) = whole[1],
              case .request(let setup) = whole[2], case .request(let get) = whole[3] else {
            Issue.record("\(whole)")
            return
        }
        #expect(options.method == "OPTIONS" && options.uri == "rtsp://127.0.0.1:8554/live" && options.cSeq == "1")
        #expect(channel == 1 && payload == [0x80, 0xC9, 0x00])
        #expect(setup.header("transport") == "RTP/AVP/TCP;unicast;interleaved=0-1" && setup.cSeq == "3")
        #expect(get.body == Array("abcd".utf8) && get.cSeq == "9")
        for chunk in [1, 2, 3, 7, 64] {
            #expect(try Self.messages(bytes, chunk: chunk) == whole, "chunks of \(chunk)")
        }
        // And the request writes itself back the same.
        #expect(try Self.messages(setup.bytes) == [.request(setup)])
    }

    /// What a client reads: a DESCRIBE answer with its SDP body, then interleaved RTP, then
    /// a 404, in any chunking; a status line that is not `RTSP/1.0 DDD` is a malformed message.
    @Test func readsResponsesBetweenInterleavedFrames() throws {
        let sdp = "v=0\r\nm=video 0 RTP/AVP 96\r\na=control:track1\r\n"
        let describe = "RTSP/1.0 200 OK\r\nCSeq: 2\r\nContent-Base: rtsp://h/live/\r\n"
            + "Content-Length: \(sdp.utf8.count)\r\n\r\n" + sdp
        let frame: [UInt8] = [0x24, 0, 0, 2, 0x80, 0x60]
        let bytes = Array(describe.utf8) + frame + Array("RTSP/1.0 404 Not Found\r\nCSeq: 3\r\n\r\n".utf8)
        let whole = try Self.messages(bytes)
        guard whole.count == 3, case .response(let ok) = whole[0], case .interleavedFrame(0, [0x80, 0x60]) = whole[1],
              case .response(let missing) = whole[2] else {
            Issue.record("\(whole)")
            return
        }
        #expect(ok.status == .ok && ok.header("cseq") == "2" && ok.header("Content-Base") == "rtsp://h/live/")
        #expect(ok.body == Array(sdp.utf8))
        #expect(missing.status == .notFound && missing.header("CSeq") == "3" && missing.body.isEmpty)
        for chunk in [1, 5, 13] {
            #expect(try Self.messages(bytes, chunk: chunk) == whole, "chunks of \(chunk)")
        }
        for line in ["RTSP/1.0 20 OK", "RTSP/1.0 2000 OK", "RTSP/2.0 200 OK", "RTSP/1.0 abc OK"] {
            let messages = try Self.messages(Array("\(line)\r\nCSeq: 5\r\n\r\n".utf8))
            guard case .malformedRequest(_, let cSeq) = messages.first else {
                Issue.record("\(line): \(messages)")
                continue
            }
            #expect(cSeq == "5", "\(line)")
        }
    }

    /// `nextInterleavedFrame` (a client's RTP path, no copy) and `next()` together read what
    /// `next()` alone reads, in any chunking, junk skipped by a resynchronizing reader included;
    /// it leaves anything that is not a whole interleaved frame to `next()`.
    @Test func interleavedFramesInPlaceReadAsNextReadsThem() throws {
        let describe = "RTSP/1.0 200 OK\r\nCSeq: 2\r\nContent-Length: 3\r\n\r\nv=0"
        let bytes = [0x24, 0, 0, 3, 0x80, 0x60, 0x01] + Array(describe.utf8) + Array("\r\njunk!".utf8)
            + [0x24, 1, 0, 2, 0x80, 0xC8, 0x24, 0, 0, 0] + Array("RTSP/1.0 404 Not Found\r\nCSeq: 3\r\n\r\n".utf8)
        func read(chunk: Int, inPlace: Bool) throws -> [RTSPMessageReader.Message] {
            try Self.messages(bytes, chunk: chunk, resynchronizing: true, inPlace: inPlace, skipped: 5)
        }
        let expected = try read(chunk: .max, inPlace: false)
        #expect(expected.count == 5 && expected[3] == .interleavedFrame(channel: 0, payload: []))
        for chunk in [1, 2, 5, 11, .max] {
            #expect(try read(chunk: chunk, inPlace: true) == expected, "chunks of \(chunk)")
        }
        var reader = RTSPMessageReader()
        reader.append(Array(Self.options.utf8))
        #expect(reader.nextInterleavedFrame { _, _ in true } == nil)
        #expect(try reader.next() != nil)
    }

    @Test func toleratesBareLineFeedsContinuationLinesAndBlankLinesBetweenMessages() throws {
        let text = "\r\n\r\nPLAY rtsp://h/live RTSP/1.0\nCSeq: 4\nSession: 12345678;timeout=60\nX-Long: a\n\t b\n\n"
        let messages = try Self.messages(Array(text.utf8))
        guard case .request(let play) = messages.first, messages.count == 1 else {
            Issue.record("\(messages)")
            return
        }
        #expect(play.session == "12345678")
        #expect(play.header("x-long") == "a b")
    }

    /// Found by the rtsp fuzz target: a continuation line of spaces alone left a trailing space,
    /// so the request did not read back the same from its own bytes.
    @Test func blankContinuationLineAddsNothing() throws {
        let messages = try Self.messages(Array("PLAY * RTSP/1.0\r\nCSeq: 4\r\nSession: 1A;ti\r\n     \r\nX: \r\n  y\r\n\r\n".utf8))
        guard case .request(let play) = messages.first else {
            Issue.record("\(messages)")
            return
        }
        #expect(play.header("Session") == "1A;ti")
        #expect(play.header("X") == "y")
        #expect(try Self.messages(play.bytes) == [.request(play)])
    }

    static let malformed: [(name: String, text: String, code: MediaError.Code, field: String)] = [
        ("two words", "OPTIONS RTSP/1.0\r\nCSeq: 2\r\n\r\n", .invalidRTSPMessage, "Request-Line"),
        ("four words", "OPTIONS * x RTSP/1.0\r\nCSeq: 2\r\n\r\n", .invalidRTSPMessage, "Request-Line"),
        ("no version", "OPTIONS * FOO\r\nCSeq: 2\r\n\r\n", .invalidRTSPMessage, "RTSP-Version"),
        ("RTSP 2.0", "OPTIONS * RTSP/2.0\r\nCSeq: 2\r\n\r\n", .unsupportedRTSPVersion, "RTSP-Version"),
        ("HTTP", "GET / HTTP/1.1\r\nCSeq: 2\r\n\r\n", .unsupportedRTSPVersion, "RTSP-Version"),
        ("method not a token", "OP(TIONS * RTSP/1.0\r\nCSeq: 2\r\n\r\n", .invalidRTSPMessage, "Method"),
        ("control character", "OPTIONS *\u{1} RTSP/1.0\r\nCSeq: 2\r\n\r\n", .invalidRTSPMessage, "Request-Line"),
        ("header without colon", "OPTIONS * RTSP/1.0\r\nCSeq: 2\r\nGarbage\r\n\r\n", .invalidRTSPMessage, "header"),
        ("header name with space", "OPTIONS * RTSP/1.0\r\nCSeq: 2\r\nBad Name: x\r\n\r\n", .invalidRTSPMessage, "header"),
        ("continuation first", "OPTIONS * RTSP/1.0\r\n continued\r\nCSeq: 2\r\n\r\n", .invalidRTSPMessage, "header"),
    ]

    /// A malformed request is reported with its code, field and CSeq, and skipped: the request
    /// after it is read.
    @Test(arguments: malformed.indices)
    func malformedRequestIsReportedAndSkipped(index: Int) throws {
        let row = Self.malformed[index]
        let messages = try Self.messages(Array((row.text + Self.options).utf8))
        #expect(messages.count == 2, "\(row.name)")
        guard case .malformedRequest(let error, let cSeq) = messages.first else {
            Issue.record("\(row.name): \(messages)")
            return
        }
        #expect(error.code == row.code && error.field == row.field, "\(row.name): \(error)")
        #expect(cSeq == "2", "\(row.name)")
        #expect(RTSPStatus(for: error).code == (row.code == .unsupportedRTSPVersion ? 505 : 400))
        guard case .request(let next) = messages.last else { return }
        #expect(next.method == "OPTIONS", "\(row.name)")
    }

    static let fatal: [(name: String, text: String, field: String, status: Int)] = [
        ("request line over 2 KiB", "DESCRIBE rtsp://h/" + String(repeating: "a", count: 3000), "Request-Line", 414),
        ("header section over 8 KiB", "OPTIONS * RTSP/1.0\r\n" + String(repeating: "X-A: b\r\n", count: 1200), "header", 400),
        ("body over 16 KiB", "SET_PARAMETER * RTSP/1.0\r\nContent-Length: 999999\r\n\r\n", "Content-Length", 413),
        ("Content-Length not a number", "SET_PARAMETER * RTSP/1.0\r\nContent-Length: -1\r\n\r\n", "Content-Length", 400),
        ("Content-Length too long", "SET_PARAMETER * RTSP/1.0\r\nContent-Length: 00000000001\r\n\r\n", "Content-Length", 400),
    ]

    /// Too large, or of unknown length: the reader throws before the rest arrives (never waits
    /// for 8 KiB more), and ignores everything after.
    @Test(arguments: fatal.indices)
    func oversizedOrUnframedRequestIsFatal(index: Int) throws {
        let row = Self.fatal[index]
        var reader = RTSPMessageReader()
        reader.append(Array(row.text.utf8))
        do {
            let message = try reader.next()
            Issue.record("\(row.name): \(String(describing: message))")
        } catch {
            #expect(error.field == row.field, "\(row.name): \(error)")
            #expect(RTSPStatus(for: error).code == row.status, "\(row.name): \(error)")
        }
        #expect(reader.hasFailed)
        reader.append(Array(Self.options.utf8))
        #expect(try reader.next() == nil)
    }

    @Test func partialRequestWaitsAndSaysSo() throws {
        var reader = RTSPMessageReader()
        reader.append(Array("OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n".utf8))
        #expect(try reader.next() == nil)
        #expect(reader.hasPartialMessage)
        reader.append(Array("\r\n".utf8))
        #expect(try reader.next() != nil)
        #expect(!reader.hasPartialMessage)
        // A partial interleaved frame waits too.
        reader.append([0x24, 0, 0, 10, 1, 2])
        #expect(try reader.next() == nil)
        #expect(reader.hasPartialMessage)
    }

    @Test func responseEchoesCSeqAndCountsItsBody() {
        let response = RTSPResponse(status: .ok, cSeq: "7", headers: [("Content-Type", "application/sdp"), ("X", "a\r\nInjected: 1")],
                                    body: Array("v=0\r\n".utf8))
        let text = String(decoding: response.bytes, as: UTF8.self)
        #expect(text == "RTSP/1.0 200 OK\r\nCSeq: 7\r\nContent-Type: application/sdp\r\nX: aInjected: 1\r\nContent-Length: 5\r\n\r\nv=0\r\n")
        #expect(String(decoding: RTSPResponse(status: .sessionNotFound, cSeq: nil).bytes, as: UTF8.self)
            == "RTSP/1.0 454 Session Not Found\r\n\r\n")
    }

    @Test func transportListAsPlayersSendIt() throws {
        // GStreamer's rtspsrc offers several; FFmpeg one.
        let list = try RTSPTransport.parseList("RTP/AVP/TCP;unicast;interleaved=0-1,RTP/AVP;unicast;client_port=5000-5001;mode=\"PLAY\"")
        #expect(list.count == 2)
        #expect(list[0].lowerTransport == .tcp && list[0].interleavedChannels == 0...1 && !list[0].isMulticast)
        #expect(list[1].lowerTransport == .udp && list[1].clientPorts == 5000...5001 && list[1].mode == "PLAY")
        var answer = list[1]
        answer.serverPorts = 6000...6001
        answer.ssrc = 0xAB
        #expect(answer.text == "RTP/AVP;unicast;client_port=5000-5001;server_port=6000-6001;ssrc=000000AB;mode=\"PLAY\"")
        #expect(try RTSPTransport(parsing: answer.text) == answer)
        #expect(try RTSPTransport(parsing: "RTP/AVP;multicast;client_port=7000").clientPorts == 7000...7000)
    }

    @Test func theServerChoosesTheFirstUsableUnicastTransport() throws {
        let offered = try RTSPTransport.parseList(
            "RTP/AVP;multicast,RTP/SAVP;unicast;client_port=4000-4001,RTP/AVP;unicast,RTP/AVP/TCP;unicast;interleaved=4;mode=record,"
                + "RTP/AVP;unicast;client_port=5000-5001")
        // Multicast, another profile and UDP without client ports are passed over; a missing mode is PLAY.
        #expect(RTSPTransport.firstUnicastRTP(in: offered, mode: "PLAY") == offered[4])
        // RECORD takes the TCP one, its single channel made a pair; RECEIVE counts as RECORD.
        #expect(RTSPTransport.firstUnicastRTP(in: offered, mode: "RECORD")?.interleavedChannels == 4...5)
        #expect(RTSPTransport.firstUnicastRTP(in: try RTSPTransport.parseList("RTP/AVP/TCP;unicast;mode=receive"), mode: "RECORD")?
            .interleavedChannels == 0...1)
        #expect(RTSPTransport.firstUnicastRTP(in: try RTSPTransport.parseList("RTP/AVP/TCP;interleaved=255"), mode: "PLAY")?
            .interleavedChannels == 255...255)
        #expect(RTSPTransport.firstUnicastRTP(in: Array(offered.prefix(3)), mode: "PLAY") == nil)
    }

    @Test(arguments: [
        ("", "transport-protocol"), ("RTP", "transport-protocol"), ("RTP/AVP/SCTP", "lower-transport"),
        ("RTP/AVP/TCP;interleaved=1-0", "interleaved"), ("RTP/AVP/TCP;interleaved=300", "interleaved"),
        ("RTP/AVP;client_port=5000-", "client_port"), ("RTP/AVP;client_port=99999", "client_port"),
        ("RTP/AVP;ssrc=XYZ", "ssrc"), ("RTP/AVP,", "transport-protocol"),
    ])
    func malformedTransport(text: String, field: String) {
        MalformedCase("Transport: \(text)", .invalidTransport, field: field) { _ = try RTSPTransport.parseList(text) }.expectRejected()
        #expect(RTSPStatus(for: MediaError(.invalidTransport, field: field)) == .unsupportedTransport)
    }
}

@Suite("RTCP sender report", .ownThread)
struct RTCPSenderReportTests {
    @Test func layoutOfRFC3550() {
        let ntp = RTCPSenderReport.ntpTimestamp(unixSeconds: 1_700_000_000, nanoseconds: 500_000_000)
        #expect(ntp == UInt64(1_700_000_000 + 2_208_988_800) << 32 | 0x8000_0000)
        let report = RTCPSenderReport(ssrc: 0x0102_0304, ntpTimestamp: ntp, rtpTimestamp: 0x0A0B_0C0D, packetCount: 7,
                                      octetCount: 1000, canonicalName: "ab")
        let bytes = report.bytes
        // SR: V=2, RC=0, PT=200, length 6 words (28 bytes); SDES: SC=1, PT=202.
        #expect(Array(bytes[0..<8]) == [0x80, 200, 0, 6, 1, 2, 3, 4])
        #expect(Array(bytes[16..<28]) == [0x0A, 0x0B, 0x0C, 0x0D, 0, 0, 0, 7, 0, 0, 0x03, 0xE8])
        #expect(bytes[28] == 0x81 && bytes[29] == 202)
        let sdesWords = Int(bytes[30]) << 8 | Int(bytes[31])
        #expect(bytes.count == 28 + 4 + sdesWords * 4 && bytes.count % 4 == 0)
        #expect(Array(bytes[32..<40]) == [1, 2, 3, 4, 1, 2, UInt8(ascii: "a"), UInt8(ascii: "b")])
        #expect(bytes[40] == 0, "END item")
    }
}
