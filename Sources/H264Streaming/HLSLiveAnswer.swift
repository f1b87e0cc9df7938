public import MediaContainers

/// What an ``HLSLiveStream`` answers a request for its playlist or one of its resources, once
/// it need not wait any longer: the HTTP server (``HLSServer``) makes the response of it.
public enum HLSLiveAnswer: Sendable, Hashable {
    /// The media playlist (200, `application/vnd.apple.mpegurl`, never cached).
    case playlist(String)
    /// A segment, part or init segment (200, its content type; cached for long when immutable).
    case resource(HLSResource)
    /// The request asks for something the stream will never have in time (400): a malformed
    /// query, or `_HLS_msn` more than two segments ahead. The text says why.
    case badRequest(String)
    /// No such resource (404).
    case notFound
    /// The stream cannot answer now (503): too many requests wait already, or what was asked
    /// for did not come within the wait limit. The text says which.
    case unavailable(String)
}
