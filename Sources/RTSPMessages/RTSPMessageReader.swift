public import MediaCore
/// Reads RTSP 1.0 requests (RFC 2326 clause 6), responses (clause 7: a server reads them
/// never, a client always) and interleaved binary frames (clause 10.12: `$`, channel, 16-bit
/// length, data) from the bytes of one connection, as they arrive.
///
/// ```swift
/// var reader = RTSPMessageReader()
/// reader.append(bytesFromSocket)
/// while let message = try reader.next() {
///     switch message {
///     case .request(let request): answer(request)
///     case .interleavedFrame(let channel, let payload): rtcp(channel, payload)
///     case .response(let response): client(response)
///     case .malformedRequest(let error, let cSeq): send(RTSPResponse(status: RTSPStatus(for: error), cSeq: cSeq))
///     }
/// }
/// ```
///
/// "Need more bytes" is not an error: `next()` returns nil until a whole message is there.
/// Everything is bounded (``Limits``): a request line, header section or body over its limit
/// throws `MediaError.Code.rtspMessageTooLarge` without waiting for the rest.
///
/// - A request whose request line or header lines are malformed, but whose end is known (the
///   empty line, and a readable `Content-Length`), is reported as ``Message/malformedRequest(_:cSeq:)``
///   and skipped; the next request is read normally (damaged, not fatal).
/// - A message that is too large, or whose `Content-Length` cannot be read, loses the framing
///   of the connection: `next()` throws, and from then on the reader ignores its input and
///   returns nil (fatal: answer once and close the connection).
/// - Empty lines between messages are skipped (as HTTP/1.1 servers do); header lines may end
///   in CRLF or a bare LF, and a line starting with a space or tab continues the previous one.
/// - A client's reader (`init(limits:resynchronizing:)` with `resynchronizing`) skips bytes
///   that begin neither an interleaved frame (`$`, a channel, a length, an RTP or RTCP
///   packet), nor a response (`RTSP/`), nor a request (an upper-case method and a space), as
///   FFmpeg and VLC do: cameras send garbage between interleaved frames (gortsplib#653, a
///   Canon VB-H47). `skippedByteCount` counts them.
public struct RTSPMessageReader: Sendable {
    /// The bounds of what one message may hold.
    public struct Limits: Hashable, Sendable {
        /// The longest request line (method, Request-URI, version), CRLF included.
        public var maximumRequestLineSize: Int
        /// The longest header section: request line, header lines and the empty line.
        public var maximumHeaderSize: Int
        /// The largest `Content-Length`.
        public var maximumBodySize: Int

        /// Creates limits; the defaults are far above what players send (FFmpeg's and
        /// GStreamer's requests are a few hundred bytes).
        public init(maximumRequestLineSize: Int = 2048, maximumHeaderSize: Int = 8192, maximumBodySize: Int = 16_384) {
            self.maximumRequestLineSize = maximumRequestLineSize
            self.maximumHeaderSize = maximumHeaderSize
            self.maximumBodySize = maximumBodySize
        }
    }

    /// One message read from the connection.
    public enum Message: Hashable, Sendable {
        /// A well-formed request.
        case request(RTSPRequest)
        /// A well-formed response: its first line is a status line `RTSP/1.0 CODE Reason-Phrase`
        /// (clause 7.1). The headers are as read, `Content-Length` included.
        case response(RTSPResponse)
        /// An interleaved frame (RTP or RTCP over the RTSP connection): its channel and data.
        case interleavedFrame(channel: UInt8, payload: [UInt8])
        /// A request that was skipped because it is malformed: the error (code, field, byte
        /// offset in the message) and its `CSeq` when one could be read, for the 400 or 505 answer.
        case malformedRequest(MediaError, cSeq: String?)
    }

    /// The bounds in force.
    public let limits: Limits
    /// True for a client's reader: junk between messages is skipped (see the type's notes).
    public let resynchronizing: Bool
    /// The bytes skipped as junk so far, CR and LF not counted (only when `resynchronizing`).
    public private(set) var skippedByteCount = 0
    private var buffer: [UInt8] = []
    private var start = 0
    private var failed = false

    /// Creates a reader with `limits`; a client passes `resynchronizing: true` to skip what a
    /// camera sends between messages that is none.
    public init(limits: Limits = Limits(), resynchronizing: Bool = false) {
        self.limits = limits
        self.resynchronizing = resynchronizing
    }

    /// True when bytes of an unfinished message are waiting (for a request timeout).
    public var hasPartialMessage: Bool { !failed && start < buffer.count }

    /// True after `next()` threw: the framing is lost and input is ignored.
    public var hasFailed: Bool { failed }

    /// Adds bytes received from the connection.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        guard !failed else { return }
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole message, or nil when more bytes are needed.
    ///
    /// - Throws: `MediaError.Code.rtspMessageTooLarge` (field `Request-Line`, `header` or
    ///   `Content-Length`) for a message over the `limits`; `MediaError.Code.invalidRTSPMessage`
    ///   (field `Content-Length`) when the body's length cannot be read. Both are fatal: the
    ///   reader ignores everything after.
    public mutating func next() throws(MediaError) -> Message? {
        guard skipToMessage() else { return nil }
        if buffer[start] == UInt8(ascii: "$") {
            guard let length = interleavedFrameLength() else { return nil }
            let channel = buffer[start + 1]
            let payload = Array(buffer[(start + 4)..<(start + 4 + length)])
            start += 4 + length
            return .interleavedFrame(channel: channel, payload: payload)
        }
        do {
            return try nextRequest()
        } catch {
            failed = true
            buffer = []
            start = 0
            throw error
        }
    }

    /// Hands the next message to `body` in place, without copying it, when it is a whole
    /// interleaved frame (its channel and data, valid during the call), and returns what `body`
    /// returned; nil when the next message is anything else or not all there yet (then
    /// `next()` reads it). A client reads its RTP this way: one copy of each packet less.
    ///
    /// ```swift
    /// while true {
    ///     if reader.nextInterleavedFrame({ channel, data in receive(channel, data) }) != nil { continue }
    ///     guard let message = try reader.next() else { break }
    ///     handle(message)
    /// }
    /// ```
    public mutating func nextInterleavedFrame<Result>(_ body: (UInt8, UnsafeRawBufferPointer) throws -> Result) rethrows -> Result? {
        guard skipToMessage(), buffer[start] == UInt8(ascii: "$"), let length = interleavedFrameLength() else { return nil }
        let channel = buffer[start + 1], payloadStart = start + 4
        start += 4 + length
        return try buffer.withUnsafeBytes { bytes in
            try body(channel, UnsafeRawBufferPointer(rebasing: bytes[payloadStart..<(payloadStart + length)]))
        }
    }

    // MARK: - Internals

    /// Skips empty lines (and, resynchronizing, junk) before the next message; true when a
    /// message begins at `start`, false when more bytes are needed (or the reader failed).
    private mutating func skipToMessage() -> Bool {
        guard !failed else { return false }
        while start < buffer.count, buffer[start] == 0x0D || buffer[start] == 0x0A { start += 1 }
        if resynchronizing {
            while start < buffer.count {
                guard let begins = beginsMessage(at: start) else { return false }
                if begins { break }
                if buffer[start] != 0x0D && buffer[start] != 0x0A { skippedByteCount += 1 }
                start += 1
            }
        }
        return start < buffer.count
    }

    /// The data length of the interleaved frame at `start` (`$`, channel, 16-bit length), or
    /// nil when it is not all there yet.
    private func interleavedFrameLength() -> Int? {
        guard buffer.count - start >= 4 else { return nil }
        let length = Int(buffer[start + 2]) << 8 | Int(buffer[start + 3])
        return buffer.count - start >= 4 + length ? length : nil
    }

    /// Whether the bytes at `index` begin an interleaved frame carrying RTP or RTCP (version 2),
    /// a response (`RTSP/`) or a request (an upper-case method and a space); nil when more
    /// bytes are needed to tell.
    private func beginsMessage(at index: Int) -> Bool? {
        let available = buffer.count - index
        switch buffer[index] {
        case UInt8(ascii: "$"):
            guard available >= 5 else { return nil }
            return buffer[index + 2] == 0 && buffer[index + 3] == 0 || buffer[index + 4] >> 6 == 2
        case UInt8(ascii: "A")...UInt8(ascii: "Z"):
            let status = Array("RTSP/".utf8)
            if buffer[index...].starts(with: status.prefix(available)) { return available >= status.count ? true : nil }
            for offset in 1..<min(available, 24) {
                let byte = buffer[index + offset]
                if byte == 0x20 { return true }
                guard (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || byte == UInt8(ascii: "_") else { return false }
            }
            return available < 24 ? nil : false
        default:
            return false
        }
    }

    /// The end of the header section (the index after its empty line), or nil if not there yet.
    private func headerEnd() throws(MediaError) -> Int? {
        var index = start
        var lineStart = start
        let end = min(buffer.count, start + limits.maximumHeaderSize)
        while index < end {
            if buffer[index] == 0x0A {
                let line = lineStart..<index
                if lineStart == start, line.count + 1 > limits.maximumRequestLineSize {
                    throw MediaError(.rtspMessageTooLarge, field: "Request-Line", byteOffset: 0,
                                    "a request line over \(limits.maximumRequestLineSize) bytes")
                }
                // The empty line: LF alone or CR LF.
                if line.isEmpty || (line.count == 1 && buffer[lineStart] == 0x0D) { return index + 1 }
                lineStart = index + 1
            }
            index += 1
        }
        if lineStart == start, end - start >= limits.maximumRequestLineSize {
            throw MediaError(.rtspMessageTooLarge, field: "Request-Line", byteOffset: 0,
                            "a request line over \(limits.maximumRequestLineSize) bytes")
        }
        if end - start >= limits.maximumHeaderSize {
            throw MediaError(.rtspMessageTooLarge, field: "header", byteOffset: 0,
                            "a header section over \(limits.maximumHeaderSize) bytes")
        }
        return nil
    }

    private mutating func nextRequest() throws(MediaError) -> Message? {
        guard let end = try headerEnd() else { return nil }
        // Lines without their CR LF; offsets are relative to the message's first byte.
        var lines: [(offset: Int, bytes: ArraySlice<UInt8>)] = []
        var lineStart = start
        for index in start..<end where buffer[index] == 0x0A {
            var lineEnd = index
            if lineEnd > lineStart, buffer[lineEnd - 1] == 0x0D { lineEnd -= 1 }
            lines.append((lineStart - start, buffer[lineStart..<lineEnd]))
            lineStart = index + 1
        }
        lines.removeLast() // the empty line

        // Header fields first, leniently: Content-Length is needed to skip even a malformed request.
        var problem: MediaError?
        var headers: [(name: String, value: String)] = []
        for (offset, bytes) in lines.dropFirst() {
            if let bad = bytes.firstIndex(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
                problem = problem ?? MediaError(.invalidRTSPMessage, field: "header", byteOffset: offset + bad - bytes.startIndex,
                                               "a control character in a header line")
                continue
            }
            let text = String(decoding: bytes, as: UTF8.self)
            if text.first == " " || text.first == "\t" {
                if headers.isEmpty {
                    problem = problem ?? MediaError(.invalidRTSPMessage, field: "header", byteOffset: offset,
                                                   "a continuation line before any header field")
                } else {
                    let more = text.trimmingASCIIWhitespace()
                    if !more.isEmpty {
                        let value = headers[headers.count - 1].value
                        headers[headers.count - 1].value = value.isEmpty ? more : value + " " + more
                    }
                }
                continue
            }
            guard let colon = text.firstIndex(of: ":"), colon > text.startIndex,
                  text[..<colon].allSatisfy(Self.isTokenCharacter) else {
                problem = problem ?? MediaError(.invalidRTSPMessage, field: "header", byteOffset: offset,
                                               "a header line that is not NAME: VALUE")
                continue
            }
            headers.append((String(text[..<colon]), text[text.index(after: colon)...].trimmingASCIIWhitespace()))
        }

        var bodyLength = 0
        if let lengthText = headers.first(where: { $0.name.lowercased() == "content-length" })?.value {
            guard !lengthText.isEmpty, lengthText.count <= 9, lengthText.allSatisfy(\.isASCIIDigit), let length = Int(lengthText) else {
                throw MediaError(.invalidRTSPMessage, field: "Content-Length", "Content-Length \(lengthText.prefix(32)) is not a number")
            }
            guard length <= limits.maximumBodySize else {
                throw MediaError(.rtspMessageTooLarge, field: "Content-Length",
                                "a body of \(length) bytes, over \(limits.maximumBodySize)")
            }
            bodyLength = length
        }
        guard buffer.count - end >= bodyLength else { return nil }
        let body = Array(buffer[end..<(end + bodyLength)])
        start = end + bodyLength

        let cSeq = headers.first { $0.name.lowercased() == "cseq" }?.value
        if problem == nil, let status = Self.statusLine(lines[0].bytes) {
            return .response(RTSPResponse(status: status, cSeq: nil, headers: headers, body: body))
        }
        do throws(MediaError) {
            let (method, uri, version) = try Self.requestLine(lines[0].bytes)
            if let problem { throw problem }
            return .request(RTSPRequest(method: method, uri: uri, version: version, headers: headers, body: body))
        } catch {
            return .malformedRequest(error, cSeq: cSeq)
        }
    }

    /// `Method SP Request-URI SP RTSP-Version` (RFC 2326 clause 6.1).
    private static func requestLine(_ bytes: ArraySlice<UInt8>) throws(MediaError) -> (String, String, String) {
        if let bad = bytes.firstIndex(where: { $0 <= 0x20 && $0 != 0x20 || $0 == 0x7F }) {
            throw MediaError(.invalidRTSPMessage, field: "Request-Line", byteOffset: bad - bytes.startIndex,
                            "a control character in the request line")
        }
        let parts = bytes.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw MediaError(.invalidRTSPMessage, field: "Request-Line", byteOffset: 0,
                            "a request line that is not METHOD URI RTSP/1.0")
        }
        let method = String(decoding: parts[0], as: UTF8.self)
        guard method.allSatisfy(isTokenCharacter) else {
            throw MediaError(.invalidRTSPMessage, field: "Method", byteOffset: 0, "a method that is not a token")
        }
        let uri = String(decoding: parts[1], as: UTF8.self)
        let version = String(decoding: parts[2], as: UTF8.self)
        guard version == "RTSP/1.0" else {
            let offset = parts[2].startIndex - bytes.startIndex
            if version.hasPrefix("RTSP/") || version.hasPrefix("HTTP/") {
                throw MediaError(.unsupportedRTSPVersion, field: "RTSP-Version", byteOffset: offset,
                                "\(version.prefix(16)): only RTSP/1.0 is served")
            }
            throw MediaError(.invalidRTSPMessage, field: "RTSP-Version", byteOffset: offset, "no RTSP version")
        }
        return (method, uri, version)
    }

    /// `RTSP/1.0 SP 3DIGIT SP Reason-Phrase` (RFC 2326 clause 7.1), or nil when the line is not
    /// one (it is then read as a request line, and reported as a malformed request).
    private static func statusLine(_ bytes: ArraySlice<UInt8>) -> RTSPStatus? {
        let prefix = Array("RTSP/1.0 ".utf8)
        guard bytes.count >= prefix.count + 3, bytes.starts(with: prefix),
              !bytes.contains(where: { $0 < 0x20 && $0 != 0x09 || $0 == 0x7F }) else { return nil }
        let digits = bytes.dropFirst(prefix.count).prefix(3)
        guard digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let rest = bytes.dropFirst(prefix.count + 3)
        guard rest.isEmpty || rest.first == 0x20 else { return nil }
        let code = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        return RTSPStatus(code: code, reasonPhrase: String(decoding: rest.dropFirst(), as: UTF8.self))
    }

    /// A character of an RFC 2326 token (clause 15.1: CHAR except controls and tspecials).
    static func isTokenCharacter(_ character: Character) -> Bool {
        guard let ascii = character.asciiValue, ascii > 0x20, ascii < 0x7F else { return false }
        return !"()<>@,;:\\\"/[]?={}".utf8.contains(ascii)
    }
}

extension Character {
    /// `0`…`9`.
    var isASCIIDigit: Bool { asciiValue.map { (0x30...0x39).contains($0) } ?? false }
}
