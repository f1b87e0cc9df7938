import H264
import H264TestSupport
import Testing
import MediaContainers
import RTMPMessages

/// RTMP's handshake (clause 5.2), control messages (5.4, 7.1.7) and commands (7.1.1, 7.2):
/// byte layouts from the specification, a client and a server handshaking with each other, and
/// the commands of a publish as nginx-rtmp reads them.
@Suite(.ownThread) struct RTMPMessageTests {
    /// C0 C1 ⇄ S0 S1 S2, C2: the client answers S1 with C2 at once, each side is complete after
    /// the other's last packet, and bytes after it are the first chunks.
    @Test func handshakeBothSides() throws {
        var client = RTMPHandshake(role: .client, time: 7, random: [1, 2, 3])
        var server = RTMPHandshake(role: .server, random: [9])
        let c0c1 = client.initialBytes
        #expect(c0c1.count == 1 + 1536)
        #expect(Array(c0c1.prefix(9)) == [3, 0, 0, 0, 7, 0, 0, 0, 0])
        #expect(Array(c0c1[9..<12]) == [1, 2, 3])
        #expect(server.initialBytes.isEmpty)
        // C0 and C1 byte by byte: the server answers once, when C1 is whole.
        var s0s1s2: [UInt8] = []
        for byte in c0c1 { s0s1s2 += try server.receive([byte]) }
        #expect(s0s1s2.count == 1 + 2 * 1536)
        #expect(Array(s0s1s2.suffix(1536)) == Array(c0c1.dropFirst()))
        // S0 S1 first: C2 (the echo of S1) comes before S2.
        let c2 = try client.receive(s0s1s2.prefix(1537))
        #expect(c2 == Array(s0s1s2[1..<1537]))
        #expect(!client.isComplete)
        #expect(try client.receive(s0s1s2.dropFirst(1537) + [0xAB]) == [])
        #expect(client.isComplete)
        #expect(client.takeRemainder() == [0xAB])
        #expect(try server.receive(c2).isEmpty)
        #expect(server.isComplete)
    }

    /// A version byte other than 3 is refused; 0x16 (TLS) is named.
    @Test func handshakeRejectsOtherVersions() {
        var client = RTMPHandshake(role: .client)
        #expect { _ = try client.receive([0x16, 3, 1]) } throws: { error in
            (error as? MediaError)?.code == .invalidRTMPHandshake && "\(error)".contains("TLS")
        }
    }

    /// Control messages: 4-byte payloads big-endian; Set Peer Bandwidth adds the limit type;
    /// user control events a 16-bit type (ping request 6, response 7, stream begin 0).
    @Test func controlMessages() throws {
        let cases: [(RTMPControlMessage, RTMPMessage.MessageType, [UInt8])] = [
            (.setChunkSize(4096), .setChunkSize, [0, 0, 0x10, 0]),
            (.abort(chunkStreamId: 6), .abort, [0, 0, 0, 6]),
            (.acknowledgement(sequenceNumber: 0x0102_0304), .acknowledgement, [1, 2, 3, 4]),
            (.windowAcknowledgementSize(2_500_000), .windowAcknowledgementSize, [0, 0x26, 0x25, 0xA0]),
            (.setPeerBandwidth(2_500_000, limitType: 2), .setPeerBandwidth, [0, 0x26, 0x25, 0xA0, 2]),
            (.userControl(.streamBegin(messageStreamId: 1)), .userControl, [0, 0, 0, 0, 0, 1]),
            (.userControl(.pingRequest(timestamp: 258)), .userControl, [0, 6, 0, 0, 1, 2]),
            (.userControl(.pingResponse(timestamp: 258)), .userControl, [0, 7, 0, 0, 1, 2]),
            (.userControl(.setBufferLength(messageStreamId: 1, milliseconds: 3000)), .userControl, [0, 3, 0, 0, 0, 1, 0, 0, 0x0B, 0xB8]),
        ]
        for (control, type, payload) in cases {
            let message = control.message
            #expect(message.type == type)
            #expect(message.payload == payload, "\(control)")
            #expect(try RTMPControlMessage(message) == control)
        }
        #expect(try RTMPControlMessage(RTMPMessage(type: .video, payload: [])) == nil)
    }

    static let malformed: [MalformedCase] = [
        MalformedCase("user control without its event type", .invalidRTMPMessage, field: "event type") {
            _ = try RTMPControlMessage(RTMPMessage(type: .userControl, payload: [0]))
        },
        MalformedCase("ping request cut short", .invalidRTMPMessage, field: "event data") {
            _ = try RTMPControlMessage(RTMPMessage(type: .userControl, payload: [0, 6, 0]))
        },
        MalformedCase("Set Peer Bandwidth without its limit type", .invalidRTMPMessage, field: "limit type") {
            _ = try RTMPControlMessage(RTMPMessage(type: .setPeerBandwidth, payload: [0, 0, 0, 1]))
        },
        MalformedCase("command without a name", .invalidRTMPMessage, field: "command name") {
            _ = try RTMPCommand(parsing: AMF0Value.number(1).serialized())
        },
        MalformedCase("transaction id that is not a number", .invalidRTMPMessage, field: "transaction id") {
            _ = try RTMPCommand(parsing: AMF0Value.serialized([.string("connect"), .string("1")]))
        },
        MalformedCase("command whose string runs past the message", .truncated, field: "string-type") {
            _ = try RTMPCommand(parsing: [0x02, 0x00, 0x07, 0x63])
        },
    ]

    @Test(arguments: malformed) func rejects(_ item: MalformedCase) { item.expectRejected() }

    /// `connect` as the specification's example and FFmpeg write it: name, transaction 1, an
    /// object with app, type, flashVer and tcUrl; it reads back equal.
    @Test func connectCommand() throws {
        let connect = RTMPCommand.connect(app: "live", tcUrl: "rtmp://127.0.0.1:1935/live", flashVer: "FMLE/3.0")
        let bytes = connect.serialized()
        #expect(Array(bytes.prefix(10)) == [0x02, 0x00, 0x07] + Array("connect".utf8))
        #expect(Array(bytes[10..<19]) == [0x00, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0])
        #expect(bytes[19] == 0x03)
        let read = try RTMPCommand(parsing: bytes)
        #expect(read == connect)
        #expect(read.commandObject["tcUrl"] == .string("rtmp://127.0.0.1:1935/live"))
        #expect(read.commandObject["type"] == .string("nonprivate"))
        #expect(connect.message().type == .commandAMF0)
    }

    /// A command of its name alone (FFmpeg's listening server sends `onFCPublish` so) is
    /// transaction 0 with a null command object.
    @Test func nameOnlyCommand() throws {
        #expect(try RTMPCommand(parsing: AMF0Value.string("onFCPublish").serialized())
                == RTMPCommand(name: "onFCPublish", transactionId: 0))
    }

    /// `onStatus` and `_error` name their outcome in the information object's `code`.
    @Test func statusCodes() throws {
        let status = RTMPCommand(name: "onStatus", transactionId: 0, arguments: [.object([
            AMF0Property("level", .string("status")), AMF0Property("code", .string("NetStream.Publish.Start")),
            AMF0Property("description", .string("Start publishing")),
        ])])
        let read = try RTMPCommand(parsing: status.serialized())
        #expect(read.statusCode == "NetStream.Publish.Start")
        #expect(read.statusDescription == "Start publishing")
        #expect(RTMPCommand.createStream(transactionId: 4).statusCode == nil)
    }

    /// The publish commands' arguments, and `@setDataFrame` carrying FLV's `onMetaData`.
    @Test func publishCommands() throws {
        #expect(RTMPCommand.publish("key").arguments == [.string("key"), .string("live")])
        #expect(RTMPCommand.releaseStream("key", transactionId: 2).arguments == [.string("key")])
        #expect(RTMPCommand.fcPublish("key", transactionId: 3).name == "FCPublish")
        #expect(RTMPCommand.fcUnpublish("key", transactionId: 6).name == "FCUnpublish")
        #expect(RTMPCommand.deleteStream(1, transactionId: 7).arguments == [.number(1)])
        #expect(RTMPCommand.play("key").arguments == [.string("key"), .number(-2)])
        let metadata = FLVMetadata(width: 640, height: 360, frameRate: 30)
        let data = RTMPCommand.setDataFrame(metadata, messageStreamId: 1)
        #expect(data.type == .dataAMF0)
        #expect(data.messageStreamId == 1)
        var reader = AMF0Reader(data.payload)
        let values = try reader.readAll()
        #expect(values.prefix(2) == [.string("@setDataFrame"), .string("onMetaData")])
        #expect(values[2]["height"] == .number(360))
    }
}
