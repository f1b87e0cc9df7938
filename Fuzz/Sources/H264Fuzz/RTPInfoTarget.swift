import H264
import RTSPMessages

extension FuzzTarget {
    /// The input as an `RTP-Info` value (`RTSPRTPInfo(parsing:)`): never traps; every warning's
    /// byte offset lies in the value; the entry picked for a stream's URL is one of the entries.
    static func rtpInfo(_ bytes: [UInt8]) {
        let value = String(decoding: bytes, as: UTF8.self)
        let info = RTSPRTPInfo(parsing: value)
        for warning in info.warnings {
            check(warning.code == .invalidRTSPHeader, "warning code \(warning.code)")
            check((0...value.utf8.count).contains(warning.byteOffset ?? -1), "warning offset \(warning.byteOffset ?? -1)")
        }
        var warnings: [MediaError] = []
        for url in info.streams.compactMap(\.url).prefix(4) + ["rtsp://cam/live/trackID=1"] {
            if let stream = info.stream(for: url, streamCount: info.streams.count, warnings: &warnings) {
                check(info.streams.contains(stream), "a stream that is not an entry")
            }
        }
    }
}
