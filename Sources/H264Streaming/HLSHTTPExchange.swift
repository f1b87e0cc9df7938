import MediaContainers
import NIOCore
import NIOHTTP1

/// The decisions of ``HLSServer``'s connections, sans I/O: which stream and what a request asks
/// for (``route(method:uri:streams:)``), and the response to an answer with its headers
/// (``response(status:body:contentType:cacheControl:)`` and the ones after it). The NIO handler
/// (`HLSHTTPHandler`) only moves bytes and waits.
enum HLSHTTPExchange {
    /// What a request leads to.
    enum Route {
        /// Answered at once, without a stream.
        case respond(Response)
        /// The playlist of `stream` (`index.m3u8`), with the query's blocking-reload items.
        case playlist(HLSLiveStream, HLSPlaylistRequest)
        /// A resource of `stream` by its name in the playlist.
        case resource(HLSLiveStream, String)
    }

    /// A response ready to write.
    struct Response: Equatable {
        var status: HTTPResponseStatus
        var headers: HTTPHeaders
        /// The body (the handler writes it for GET, not for HEAD; `Content-Length` counts it either way).
        var body: [UInt8]
        /// The body as the one buffer every viewer of a file is sent (``body`` is then empty).
        var buffer: ByteBuffer? = nil
    }

    /// The name of the playlist under each mount path.
    static let playlistName = "index.m3u8"
    /// The methods served.
    static let allowedMethods = "GET, HEAD, OPTIONS"
    /// The playlist's media type (RFC 8216 §4).
    static let playlistType = "application/vnd.apple.mpegurl"

    /// The route of a request for `uri` (path and query) by `method`, the stream found by its
    /// mount path with `streams` (the path before the last `/`).
    ///
    /// - Parameters:
    ///   - method: the request's method: GET and HEAD are served, OPTIONS is a CORS preflight,
    ///     others get 405.
    ///   - uri: the request target, `/live/index.m3u8?_HLS_msn=3&_HLS_part=1`.
    ///   - streams: finds the stream mounted at a normalized path.
    static func route(method: HTTPMethod, uri: String, streams: (String) -> HLSLiveStream?) -> Route {
        switch method {
        case .GET, .HEAD: break
        case .OPTIONS: return .respond(preflight())
        default:
            var answer = response(status: .methodNotAllowed, body: "only \(allowedMethods)")
            answer.headers.add(name: "Allow", value: allowedMethods)
            return .respond(answer)
        }
        let path: Substring, query: Substring
        if let mark = uri.firstIndex(of: "?") {
            (path, query) = (uri[..<mark], uri[uri.index(after: mark)...])
        } else {
            (path, query) = (Substring(uri), "")
        }
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/") else {
            return .respond(response(status: .badRequest, body: "the request target is not a path"))
        }
        let name = String(path[path.index(after: slash)...])
        guard !name.isEmpty, let stream = streams(RTSPMounts.normalized(String(path[..<slash]))) else {
            return .respond(answer(.notFound, resourceMaxAge: 0))
        }
        // A malformed query is the packager's to answer (HLSPackager.playlist(for:)): 400.
        return name == playlistName ? .playlist(stream, HLSPlaylistRequest(query: String(query))) : .resource(stream, name)
    }

    /// The response to a stream's answer.
    ///
    /// - Parameters:
    ///   - answer: the stream's answer.
    ///   - resourceMaxAge: seconds an immutable resource (segment, part, init segment) may be cached.
    static func answer(_ answer: HLSLiveAnswer, resourceMaxAge: Int) -> Response {
        var made: Response
        switch answer {
        case .playlist(let text):
            made = response(status: .ok, body: Array(text.utf8), contentType: playlistType, cacheControl: "no-cache")
        case .resource(let resource):
            let caching = resource.isImmutable ? "public, max-age=\(resourceMaxAge), immutable" : "no-cache"
            made = response(status: .ok, body: resource.bytes, contentType: resource.contentType, cacheControl: caching)
        case .badRequest(let reason):
            made = response(status: .badRequest, body: reason)
        case .notFound:
            made = response(status: .notFound, body: "not found")
        case .unavailable(let reason):
            made = response(status: .serviceUnavailable, body: reason)
            made.headers.add(name: "Retry-After", value: "1")
        }
        return made
    }

    /// The response carrying a file the stream made once for every viewer (`buffer`).
    ///
    /// - Parameters:
    ///   - buffer: the file's bytes.
    ///   - contentType: its media type.
    ///   - isImmutable: true for a segment, part or init segment (cached `resourceMaxAge` seconds).
    ///   - resourceMaxAge: seconds an immutable file may be cached.
    static func response(sharing buffer: ByteBuffer, contentType: String, isImmutable: Bool, resourceMaxAge: Int) -> Response {
        var made = response(status: .ok, body: [], contentType: contentType,
                            cacheControl: isImmutable ? "public, max-age=\(resourceMaxAge), immutable" : "no-cache")
        made.headers.replaceOrAdd(name: "Content-Length", value: String(buffer.readableBytes))
        made.buffer = buffer
        return made
    }

    /// The answer to a CORS preflight (`OPTIONS`): 204 with the CORS headers, cached for a day.
    static func preflight() -> Response {
        var made = response(status: .noContent, body: [], contentType: nil, cacheControl: nil)
        made.headers.remove(name: "Content-Length")
        made.headers.add(name: "Access-Control-Max-Age", value: "86400")
        return made
    }

    /// A plain-text response (an error's reason), never cached.
    static func response(status: HTTPResponseStatus, body: String) -> Response {
        response(status: status, body: Array(body.utf8), contentType: "text/plain; charset=utf-8", cacheControl: "no-cache")
    }

    /// A response of `status` with `body`, the CORS headers every answer carries, and its
    /// `Content-Length`, `Content-Type` and `Cache-Control`.
    static func response(status: HTTPResponseStatus, body: [UInt8], contentType: String?, cacheControl: String?) -> Response {
        var headers = HTTPHeaders([
            ("Access-Control-Allow-Origin", "*"),
            ("Access-Control-Allow-Methods", allowedMethods),
            ("Access-Control-Allow-Headers", "Origin, Accept, Range, Content-Type"),
            ("Access-Control-Expose-Headers", "Content-Length, Content-Type"),
            ("Content-Length", String(body.count)),
        ])
        if let contentType { headers.add(name: "Content-Type", value: contentType) }
        if let cacheControl { headers.add(name: "Cache-Control", value: cacheControl) }
        return Response(status: status, headers: headers, body: body)
    }
}
