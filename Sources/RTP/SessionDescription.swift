public import MediaCore
public import H264
/// An SDP session description (RFC 8866) of one H.264 RTP video stream (RFC 6184 clause 8):
/// `m=video`, `a=rtpmap:PT H264/90000` and `a=fmtp:PT` with `packetization-mode`,
/// `profile-level-id` and `sprop-parameter-sets`.
///
/// ```swift
/// let sdp = SessionDescription(formatDescription: format, address: "127.0.0.1", port: 5004)
/// try sdp.text.write(to: "stream.sdp")              // ffplay -protocol_whitelist file,udp,rtp stream.sdp
/// let back = try SessionDescription(parsing: sdp.text).formatDescription()
/// ```
///
/// Parsing reads the first `m=video` section whose `rtpmap` names H264, the connection address
/// (media level before session level) and the `fmtp` parameters of that payload type; other
/// lines and attributes are ignored.
///
/// The same description carries an H.265 stream (RFC 7798 section 7): `encodingName`
/// `H265`, `sprop-vps`, `sprop-sps` and `sprop-pps` in `parameterSets` and
/// `sprop-max-don-diff` in `maximumDONDifference`; `init(parsing:encodingNames:)` reads it.
public struct SessionDescription: Hashable, Sendable {
    /// `s=`: the session name.
    public var sessionName: String
    /// The connection address (`c=IN IP4 ADDRESS`, or `IP6`), where the RTP packets go.
    public var address: String
    /// The UDP port of the RTP packets (`m=video PORT`).
    public var port: Int
    /// The RTP payload type (`m=` format and `a=rtpmap:`), 0…127.
    public var payloadType: UInt8
    /// The RTP clock rate of `a=rtpmap` (90000 for H.264).
    public var clockRate: Int
    /// `packetization-mode` (0 when absent, as RFC 6184 says).
    public var packetizationMode: Int
    /// `profile-level-id`: profile_idc, the constraint-flags byte and level_idc; nil when absent.
    public var profileLevelId: [UInt8]?
    /// `sprop-parameter-sets`: the parameter set NAL units, each header byte first (for H.265,
    /// those of `sprop-vps`, `sprop-sps` and `sprop-pps`, in that order).
    public var parameterSets: [[UInt8]]
    /// The encoding name of `a=rtpmap`: `H264`, or `H265` (RFC 7798).
    public var encodingName = "H264"
    /// `sprop-max-don-diff` (H.265 only): above 0, every RTP payload carries decoding order
    /// numbers (RFC 7798 section 7.1); 0 when absent.
    public var maximumDONDifference = 0
    /// `a=control:` of the video media (RFC 2326 appendix C.1.1): the URL, absolute or
    /// relative to the RTSP `Content-Base`, that a client names in its SETUP; nil when absent.
    public var control: String?
    /// The session-level `a=control:` (before the first `m=`): the aggregate URL a client names
    /// in PLAY and TEARDOWN (RFC 2326 appendix C.1.1), absolute, relative to the base, or `*`
    /// (the base itself, as scottlamb/retina#68's camera sends it); nil when absent.
    public var sessionControl: String?
    /// What parsing tolerated (code `MediaError.Code.invalidSessionDescription`, the field, the
    /// byte offset of its line): a malformed `c=` line, a `profile-level-id` in base64 or not
    /// readable, `sprop-parameter-sets` entries that are not parameter sets (skipped: the
    /// stream's in-band ones are used), an `fmtp` for another payload type than the `rtpmap`'s.
    /// Real cameras send all of these, and FFmpeg plays them. Empty for a description made here.
    public var warnings: [MediaError] = []
    /// The first `m=audio` section of a codec this package reads (AAC as `mpeg4-generic` or
    /// `MP4A-LATM`, PCMU, PCMA, Opus), written after the video section; nil when there is none.
    /// Its own tolerated problems are in its ``AudioMediaDescription/warnings``.
    public var audio: AudioMediaDescription?

    /// Creates a description from its fields.
    public init(sessionName: String = "h264", address: String, port: Int, payloadType: UInt8 = 96, clockRate: Int = 90_000,
                packetizationMode: Int = 1, profileLevelId: [UInt8]? = nil, parameterSets: [[UInt8]] = []) {
        self.sessionName = sessionName
        self.address = address
        self.port = port
        self.payloadType = payloadType
        self.clockRate = clockRate
        self.packetizationMode = packetizationMode
        self.profileLevelId = profileLevelId
        self.parameterSets = parameterSets
    }

    /// Creates a description of a stream of `formatDescription`: profile-level-id from its
    /// configuration record, sprop-parameter-sets from its SPS and PPS.
    public init(formatDescription: FormatDescription, sessionName: String = "h264", address: String, port: Int,
                payloadType: UInt8 = 96, packetizationMode: RTPPacketizer.PacketizationMode = .nonInterleaved) {
        let record = formatDescription.configurationRecord
        self.init(sessionName: sessionName, address: address, port: port, payloadType: payloadType,
                  packetizationMode: packetizationMode.rawValue,
                  profileLevelId: [record.avcProfileIndication, record.profileCompatibility, record.avcLevelIndication],
                  parameterSets: formatDescription.sequenceParameterSets + formatDescription.pictureParameterSets)
    }

    /// The format the `sprop-parameter-sets` describe.
    ///
    /// - Throws: `MediaError.Code.missingParameterSet` when they lack an SPS or a PPS.
    public func formatDescription() throws(MediaError) -> FormatDescription {
        try FormatDescription(sequenceParameterSets: parameterSets.filter { $0.first.map { $0 & 0x1F } == 7 },
                              pictureParameterSets: parameterSets.filter { $0.first.map { $0 & 0x1F } == 8 })
    }

    /// The SDP text, lines ending in CRLF.
    public var text: String {
        let family = address.contains(":") ? "IP6" : "IP4"
        var fmtp = "packetization-mode=\(packetizationMode)"
        if encodingName == "H265" {
            fmtp = h265FormatParameters
        } else if let profileLevelId {
            fmtp += ";profile-level-id=" + profileLevelId.map { hex($0) }.joined()
        }
        if !parameterSets.isEmpty && encodingName != "H265" {
            fmtp += ";sprop-parameter-sets=" + parameterSets.map { Base64.encode($0) }.joined(separator: ",")
        }
        // Without an address there is no connection line (a parsed description keeps none either).
        var lines = ["v=0", "o=- 0 0 IN \(family) \(address.isEmpty ? "0.0.0.0" : address)", "s=\(sessionName)"]
        if !address.isEmpty { lines.append("c=IN \(family) \(address)") }
        lines.append("t=0 0")
        if let sessionControl { lines.append("a=control:\(sessionControl)") }
        lines += [
            "m=video \(port) RTP/AVP \(payloadType)",
            "a=rtpmap:\(payloadType) \(encodingName)/\(clockRate)",
        ]
        // An H.265 stream without parameter sets has no fmtp parameters.
        if !fmtp.isEmpty { lines.append("a=fmtp:\(payloadType) \(fmtp)") }
        if let control { lines.append("a=control:\(control)") }
        if let audio { lines += audio.sdpLines }
        return lines.map { $0 + "\r\n" }.joined()
    }

    /// Parses an SDP text, tolerating what real cameras send (see `warnings`).
    ///
    /// - Throws: `MediaError.Code.invalidSessionDescription` (field: the SDP line or parameter)
    ///   without an H.264 `m=video` section, or with a malformed `m=`, `rtpmap` or
    ///   `packetization-mode`: what decides how the packets are read.
    public init(parsing text: String) throws(MediaError) {
        try self.init(parsing: text, encodingNames: ["H264"])
    }

    /// Parses an SDP text describing a stream of one of `encodingNames` (`H264`, `H265`): the
    /// first `m=video` format whose `rtpmap` names one of them, tolerating what
    /// `init(parsing:)` tolerates.
    ///
    /// - Throws: as `init(parsing:)`; for H.265, `sprop-max-don-diff` that is not a number
    ///   from 0 to 32767.
    public init(parsing text: String, encodingNames: [String]) throws(MediaError) {
        let accepted = Set(encodingNames.map { $0.uppercased() })
        var sessionName = ""
        var sessionAddress: String?
        var mediaAddress: String?
        var inVideo = false, doneVideo = false
        var port: Int?
        var formats: [UInt8] = []
        var rtpmaps: [UInt8: (rate: Int, name: String)] = [:]
        var fmtps: [UInt8: (parameters: Substring, offset: Int)] = [:]
        var control: String?, sessionControl: String?, beforeMedia = true
        var warnings: [MediaError] = []
        // "\r\n" is one Character: split on any line end.
        for line in text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
            let offset = text.utf8.distance(from: text.startIndex, to: line.startIndex)
            guard line.count >= 2, line.dropFirst().first == "=" else { continue }
            let kind = line.first!
            let value = line.dropFirst(2)
            if kind == "m" {
                beforeMedia = false
                if inVideo { doneVideo = true }
                inVideo = false
                guard !doneVideo, value.hasPrefix("video ") else { continue }
                let fields = value.split(separator: " ")
                guard fields.count >= 4, let number = Int(fields[1].split(separator: "/").first ?? ""), (0...65_535).contains(number) else {
                    throw MediaError(.invalidSessionDescription, field: "m=", byteOffset: offset, "malformed media line \"\(line)\"")
                }
                inVideo = true
                port = number
                formats = fields.dropFirst(3).compactMap { UInt8($0) }.filter { $0 < 128 }
                continue
            }
            if kind == "s", !inVideo, !doneVideo { sessionName = String(value) }
            if kind == "c", !doneVideo {
                let fields = value.split(separator: " ")
                guard fields.count >= 3, fields[0] == "IN" else {
                    // go2rtc#1663: a camera's `c=IN` without an address.
                    warnings.append(MediaError(.invalidSessionDescription, field: "c=", byteOffset: offset,
                                              "malformed connection line \"\(line)\" ignored"))
                    continue
                }
                let address = String(fields[2].split(separator: "/").first ?? fields[2])
                if inVideo { mediaAddress = address } else if !doneVideo { sessionAddress = address }
            }
            if kind == "a", beforeMedia, value.hasPrefix("control:"), sessionControl == nil {
                sessionControl = String(value.dropFirst("control:".count).trimmingSpaces)
            }
            guard kind == "a", inVideo else { continue }
            if value.hasPrefix("rtpmap:") {
                let fields = value.dropFirst("rtpmap:".count).split(separator: " ", maxSplits: 1)
                guard fields.count == 2, let type = UInt8(fields[0]) else {
                    throw MediaError(.invalidSessionDescription, field: "a=rtpmap", byteOffset: offset, "malformed \"\(line)\"")
                }
                let encoding = fields[1].split(separator: "/")
                if encoding.count >= 2, accepted.contains(encoding[0].trimmingSpaces.uppercased()) {
                    guard let rate = Int(encoding[1].trimmingSpaces), rate > 0 else {
                        throw MediaError(.invalidSessionDescription, field: "a=rtpmap", byteOffset: offset, "malformed clock rate in \"\(line)\"")
                    }
                    rtpmaps[type] = (rate, encoding[0].trimmingSpaces.uppercased())
                }
            } else if value.hasPrefix("control:"), control == nil {
                control = String(value.dropFirst("control:".count).trimmingSpaces)
            } else if value.hasPrefix("fmtp:") {
                let fields = value.dropFirst("fmtp:".count).split(separator: " ", maxSplits: 1)
                if let type = UInt8(fields.first ?? ""), fields.count == 2 { fmtps[type] = (fields[1], offset) }
            }
        }
        guard let port, let payloadType = formats.first(where: { rtpmaps[$0] != nil }), let (clockRate, name) = rtpmaps[payloadType] else {
            throw MediaError(.invalidSessionDescription, field: "m=video",
                            "no video media with an \(encodingNames.joined(separator: " or ")) rtpmap")
        }
        var fmtp = fmtps[payloadType]
        if fmtp == nil, fmtps.count == 1, let (type, other) = fmtps.first {
            // retina#110: a camera whose fmtp names another payload type than its rtpmap.
            warnings.append(MediaError(.invalidSessionDescription, field: "a=fmtp", byteOffset: other.offset,
                                      "the fmtp of payload type \(type) used for payload type \(payloadType)"))
            fmtp = other
        }
        let parameters = name == "H265"
            ? try Self.h265FormatParameters(fmtp?.parameters ?? "", offset: fmtp?.offset, warnings: &warnings)
            : try Self.formatParameters(fmtp?.parameters ?? "", offset: fmtp?.offset, warnings: &warnings)
        self.init(sessionName: sessionName, address: mediaAddress ?? sessionAddress ?? "", port: port, payloadType: payloadType,
                  clockRate: clockRate, packetizationMode: parameters.mode, profileLevelId: parameters.profileLevelId,
                  parameterSets: parameters.parameterSets)
        self.encodingName = name
        self.maximumDONDifference = parameters.maximumDONDifference
        self.control = control
        self.sessionControl = sessionControl
        self.warnings = warnings
        self.audio = Self.audioMedia(parsing: text)
    }

    /// The `fmtp` parameters of the stream (RFC 6184 clause 8.1), read as FFmpeg reads them:
    /// spaces around names and values, a `profile-level-id` in base64 (retina#68) or unreadable
    /// (kept as nil), and `sprop-parameter-sets` entries that are not SPS or PPS (retina#42,
    /// VStarcam: a NAL header with the forbidden bit; FFmpeg#181, Hikvision: an empty entry)
    /// are tolerated, each with a warning at the fmtp line's `offset`.
    private static func formatParameters(_ text: Substring, offset: Int?, warnings: inout [MediaError]) throws(MediaError)
        -> FormatParameters {
        var mode = 0
        var profileLevelId: [UInt8]?
        var parameterSets: [[UInt8]] = []
        func warn(_ field: String, _ message: String) {
            warnings.append(MediaError(.invalidSessionDescription, field: field, byteOffset: offset, message))
        }
        for parameter in text.split(separator: ";") {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let key = pair[0].trimmingSpaces.lowercased(), value = pair[1].trimmingSpaces
            switch key {
            case "packetization-mode":
                guard let number = Int(value), (0...2).contains(number) else {
                    throw MediaError(.invalidSessionDescription, field: "packetization-mode", byteOffset: offset, "\"\(value)\" is not 0, 1 or 2")
                }
                mode = number
            case "profile-level-id":
                let digits = Array(value.utf8)
                if digits.count == 6, let bytes = hexBytes(digits) {
                    profileLevelId = bytes
                } else if let bytes = try? Base64.decode(value), bytes.count == 3 {
                    profileLevelId = bytes
                    warn("profile-level-id", "\"\(value)\" is base64, not 6 hex digits: read as \(bytes.map { String($0, radix: 16) })")
                } else {
                    warn("profile-level-id", "\"\(value)\" is not 6 hex digits: ignored")
                }
            case "sprop-parameter-sets":
                for entry in value.split(separator: ",", omittingEmptySubsequences: false) {
                    let unit = try? Base64.decode(entry.trimmingSpaces)
                    guard let unit, let header = unit.first, header & 0x80 == 0, [7, 8].contains(header & 0x1F), unit.count > 1 else {
                        warn("sprop-parameter-sets", "entry \"\(entry)\" is not a parameter set: skipped (the in-band ones are used)")
                        continue
                    }
                    parameterSets.append(unit)
                }
            default:
                break
            }
        }
        return FormatParameters(mode: mode, profileLevelId: profileLevelId, parameterSets: parameterSets)
    }

    private func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 15)]], as: UTF8.self)
    }

    /// The bytes of hex `digits` (an even count); nil for any other character. The one hex reader
    /// of SDP attributes is ``AudioMediaDescription``'s.
    private static func hexBytes(_ digits: [UInt8]) -> [UInt8]? {
        AudioMediaDescription.hexBytes(String(decoding: digits, as: UTF8.self))
    }
}

extension Substring {
    package var trimmingSpaces: Substring {
        var result = self
        while result.first == " " || result.first == "\t" { result = result.dropFirst() }
        while result.last == " " || result.last == "\t" || result.last == "\r" { result = result.dropLast() }
        return result
    }
}
