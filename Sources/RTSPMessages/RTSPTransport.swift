public import MediaCore
/// One transport specification of an RTSP `Transport` header (RFC 2326 clause 12.39), e.g.
/// `RTP/AVP/TCP;unicast;interleaved=0-1` or `RTP/AVP;unicast;client_port=5000-5001`.
///
/// A client lists the transports it accepts, best first, separated by commas
/// (``parseList(_:)``); the server answers with the one it chose, filled in (``text``).
/// Parameters this type does not model (`destination`, `ttl`, `layers`, `append`) are ignored.
public struct RTSPTransport: Hashable, Sendable {
    /// The lower transport: UDP (the default) or TCP (interleaved in the RTSP connection).
    public enum LowerTransport: String, Hashable, Sendable {
        /// RTP and RTCP in UDP datagrams on a port pair.
        case udp = "UDP"
        /// RTP and RTCP interleaved in the RTSP connection (`$` frames).
        case tcp = "TCP"
    }

    /// The transport protocol and profile, e.g. `RTP/AVP`.
    public var profile: String
    /// UDP or TCP.
    public var lowerTransport: LowerTransport
    /// True for `multicast` (the default is unicast).
    public var isMulticast: Bool
    /// `interleaved=`: the channels of RTP and RTCP in the RTSP connection.
    public var interleavedChannels: ClosedRange<Int>?
    /// `client_port=`: the client's RTP and RTCP ports.
    public var clientPorts: ClosedRange<Int>?
    /// `server_port=`: the server's RTP and RTCP ports.
    public var serverPorts: ClosedRange<Int>?
    /// `ssrc=`: the synchronization source the sender will use.
    public var ssrc: UInt32?
    /// `mode=`: `PLAY` (the default) or `RECORD`, without quotes.
    public var mode: String?

    /// Creates a transport specification.
    public init(profile: String = "RTP/AVP", lowerTransport: LowerTransport = .udp, isMulticast: Bool = false,
                interleavedChannels: ClosedRange<Int>? = nil, clientPorts: ClosedRange<Int>? = nil,
                serverPorts: ClosedRange<Int>? = nil, ssrc: UInt32? = nil, mode: String? = nil) {
        self.profile = profile
        self.lowerTransport = lowerTransport
        self.isMulticast = isMulticast
        self.interleavedChannels = interleavedChannels
        self.clientPorts = clientPorts
        self.serverPorts = serverPorts
        self.ssrc = ssrc
        self.mode = mode
    }

    /// Parses every transport of a `Transport` header value.
    ///
    /// - Throws: `MediaError.Code.invalidTransport` (field: the parameter) for an empty
    ///   specification, a protocol that is not `NAME/PROFILE[/UDP|TCP]`, or a malformed port,
    ///   channel or SSRC value.
    public static func parseList(_ value: String) throws(MediaError) -> [RTSPTransport] {
        var transports: [RTSPTransport] = []
        for spec in value.split(separator: ",", omittingEmptySubsequences: false) {
            transports.append(try RTSPTransport(parsing: spec))
        }
        return transports
    }

    /// The transport a unicast RTP server uses from a client's list (best first): the first
    /// `RTP/AVP` unicast one whose `mode` is `mode` and that the server can send on or receive
    /// from (TCP interleaved, or UDP with `client_port`), or nil (answer 461 Unsupported
    /// Transport).
    ///
    /// - Parameters:
    ///   - offered: the transports of the client's `Transport` header (``parseList(_:)``), best first.
    ///   - mode: `PLAY` (a missing `mode` means PLAY, clause 12.39) or `RECORD` (also
    ///     accepting the `RECEIVE` of RFC 2326's grammar).
    /// - Returns: the chosen transport with its interleaved channels made a pair (`0-1` when the
    ///   client named none, `N-(N+1)` when it named one), ready to be filled in and answered.
    public static func firstUnicastRTP(in offered: [RTSPTransport], mode: String) -> RTSPTransport? {
        let wanted = mode.uppercased()
        guard var chosen = offered.first(where: { transport in
            let offeredMode = transport.mode ?? "PLAY"
            let modeMatches = wanted == "RECORD" ? ["RECORD", "RECEIVE"].contains(offeredMode) : offeredMode == wanted
            return transport.profile == "RTP/AVP" && !transport.isMulticast && modeMatches
                && (transport.lowerTransport == .tcp || transport.clientPorts != nil)
        }) else { return nil }
        if chosen.lowerTransport == .tcp {
            let channels = chosen.interleavedChannels ?? 0...1
            chosen.interleavedChannels = channels.lowerBound...Swift.min(channels.lowerBound + 1, 255)
        }
        return chosen
    }

    /// Parses one transport specification.
    ///
    /// - Throws: as ``parseList(_:)``.
    public init(parsing spec: some StringProtocol) throws(MediaError) {
        let parts = spec.split(separator: ";", omittingEmptySubsequences: true).map { $0.trimmingASCIIWhitespace() }
        guard let protocolText = parts.first, !protocolText.isEmpty else {
            throw MediaError(.invalidTransport, field: "transport-protocol", "an empty transport specification")
        }
        let names = protocolText.split(separator: "/", omittingEmptySubsequences: false)
        guard names.count == 2 || names.count == 3, names.allSatisfy({ !$0.isEmpty }) else {
            throw MediaError(.invalidTransport, field: "transport-protocol", "\(protocolText.prefix(32)) is not PROTOCOL/PROFILE[/LOWER]")
        }
        self.init(profile: names[0].uppercased() + "/" + names[1].uppercased())
        if names.count == 3 {
            guard let lower = LowerTransport(rawValue: names[2].uppercased()) else {
                throw MediaError(.invalidTransport, field: "lower-transport", "\(names[2].prefix(16)) is neither UDP nor TCP")
            }
            lowerTransport = lower
        }
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = pair[0].lowercased()
            let value = pair.count == 2 ? String(pair[1]) : nil
            switch name {
            case "unicast": isMulticast = false
            case "multicast": isMulticast = true
            case "interleaved": interleavedChannels = try Self.range(value, field: "interleaved", maximum: 255)
            case "client_port": clientPorts = try Self.range(value, field: "client_port", maximum: 65_535)
            case "server_port": serverPorts = try Self.range(value, field: "server_port", maximum: 65_535)
            case "ssrc":
                guard let value, (1...8).contains(value.count), let number = UInt32(value, radix: 16) else {
                    throw MediaError(.invalidTransport, field: "ssrc", "ssrc wants 1 to 8 hexadecimal digits")
                }
                ssrc = number
            case "mode": mode = value.map { $0.filter { $0 != "\"" }.uppercased() }
            default: break
            }
        }
    }

    /// `N` or `N-M` with N ≤ M ≤ maximum.
    private static func range(_ value: String?, field: String, maximum: Int) throws(MediaError) -> ClosedRange<Int> {
        let bounds = (value ?? "").split(separator: "-", omittingEmptySubsequences: false)
        let numbers = bounds.compactMap { text -> Int? in
            guard (1...5).contains(text.count), text.allSatisfy(\.isASCIIDigit) else { return nil }
            return Int(text)
        }
        guard numbers.count == bounds.count, (1...2).contains(numbers.count), numbers.allSatisfy({ $0 <= maximum }),
              numbers[0] <= numbers[numbers.count - 1] else {
            throw MediaError(.invalidTransport, field: field, "\(field) wants N or N-M within 0…\(maximum)")
        }
        return numbers[0]...numbers[numbers.count - 1]
    }

    /// The specification as a `Transport` header value.
    public var text: String {
        var parts = [profile + (lowerTransport == .tcp ? "/TCP" : "")]
        parts.append(isMulticast ? "multicast" : "unicast")
        func pair(_ range: ClosedRange<Int>) -> String { "\(range.lowerBound)-\(range.upperBound)" }
        if let interleavedChannels { parts.append("interleaved=" + pair(interleavedChannels)) }
        if let clientPorts { parts.append("client_port=" + pair(clientPorts)) }
        if let serverPorts { parts.append("server_port=" + pair(serverPorts)) }
        if let ssrc { parts.append("ssrc=" + Self.hex8(ssrc)) }
        if let mode { parts.append("mode=\"\(mode)\"") }
        return parts.joined(separator: ";")
    }

    private static func hex8(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
