package import H264
package import RTP

/// Where a client sends SETUP and PLAY after DESCRIBE (RFC 2326 appendix C.1.1), read as FFmpeg,
/// retina and gortsplib read what cameras send:
///
/// - the base is `Content-Base`, else `Content-Location`, else the DESCRIBE URL. A base without
///   a scheme is repaired with a warning: `HOST:PORT/PATH` gets the request's scheme (an
///   Anjvision camera, scottlamb/moonfire-nvr#356), `/PATH` the request's scheme and host (a
///   Hanwha XNV-6011, bluenviron/gortsplib#636);
/// - the track's URL is the media-level `a=control:` resolved against the base: an absolute URL
///   as is, `*` or none the base itself, else appended after a `/` (as FFmpeg's `rtsp.c` and
///   live555 join them, which retina follows: scottlamb/retina#9);
/// - the aggregate URL (PLAY, TEARDOWN, the keepalive) is the session-level `a=control:` resolved
///   the same way; `*` or none: the base (retina#68's camera sends `a=control:*`).
package struct RTSPControlURLs: Sendable, Equatable {
    /// The base URL the controls are resolved against.
    package var base: String
    /// The URL of SETUP.
    package var track: String
    /// The URL of PLAY, TEARDOWN and the keepalive.
    package var aggregate: String
    /// The repairs made (`MediaError.Code.invalidRTSPHeader`, field the header).
    package var warnings: [MediaError] = []

    /// The URLs of the stream `description` describes, DESCRIBE having gone to `requestURL`
    /// (absolute, without user info) and answered with these headers.
    package init(requestURL: String, contentBase: String?, contentLocation: String?, description: SessionDescription) {
        let header = contentBase.map { ("Content-Base", $0) } ?? contentLocation.map { ("Content-Location", $0) }
        var base = requestURL
        if let (name, value) = header, !value.isEmpty {
            if value.contains("://") {
                base = value
            } else {
                let scheme = requestURL.range(of: "://").map { String(requestURL[..<$0.lowerBound]) } ?? "rtsp"
                if value.hasPrefix("/") {
                    let authority = requestURL.range(of: "://").map { requestURL[$0.upperBound...].prefix { $0 != "/" } } ?? ""
                    base = scheme + "://" + authority + value
                } else {
                    base = scheme + "://" + value
                }
                warnings.append(MediaError(.invalidRTSPHeader, field: name, "\(value) has no scheme: read as \(base)"))
            }
        }
        self.base = base
        track = RTSPURI.resolve(description.control, against: base)
        aggregate = RTSPURI.resolve(description.sessionControl, against: base)
    }
}
