@testable import H264Streaming
import MediaContainers
import NIOHTTP1
import Testing

/// `HLSHTTPExchange`, sans I/O: which request goes where, and the headers of each answer.
@Suite struct HLSHTTPExchangeTests {
    static let stream = HLSLiveStream()

    /// What a route leads to, as text.
    static func describe(_ route: HLSHTTPExchange.Route) -> String {
        switch route {
        case .respond(let response): "\(response.status.code)"
        case .playlist(let stream, let request):
            "playlist\(stream === Self.stream ? "" : "?") msn=\(request.mediaSequence.map(String.init) ?? "-") part=\(request.part.map(String.init) ?? "-")"
        case .resource(let stream, let name): "resource\(stream === Self.stream ? "" : "?") \(name)"
        }
    }

    @Test(arguments: [
        (HTTPMethod.GET, "/live/index.m3u8", "playlist msn=- part=-"),
        (.HEAD, "/live/index.m3u8?_HLS_msn=3&_HLS_part=1", "playlist msn=3 part=1"),
        (.GET, "/live/seg-3.m4s", "resource seg-3.m4s"),
        (.GET, "/live/part-3-1.m4s?x=1", "resource part-3-1.m4s"),
        (.GET, "/live//index.m3u8", "playlist msn=- part=-"),
        (.GET, "/other/index.m3u8", "404"),
        (.GET, "/live/", "404"),
        (.GET, "/index.m3u8", "404"),
        (.GET, "live/index.m3u8", "400"),
        (.GET, "*", "400"),
        (.POST, "/live/index.m3u8", "405"),
        (.DELETE, "/live/seg-1.m4s", "405"),
        (.OPTIONS, "/live/index.m3u8", "204"),
    ])
    func routes(method: HTTPMethod, uri: String, expected: String) {
        let route = HLSHTTPExchange.route(method: method, uri: uri) { $0 == "/live" ? Self.stream : nil }
        #expect(Self.describe(route) == expected)
    }

    @Test func everyAnswerCarriesCORSAndItsLength() {
        let answers: [HLSLiveAnswer] = [
            .playlist("#EXTM3U\n"), .resource(HLSResource(bytes: [1, 2, 3], contentType: "video/mp4", isImmutable: true)),
            .badRequest("far"), .notFound, .unavailable("full"),
        ]
        for answer in answers {
            let response = HLSHTTPExchange.answer(answer, resourceMaxAge: 60)
            #expect(response.headers["Access-Control-Allow-Origin"] == ["*"], "\(answer)")
            #expect(response.headers["Content-Length"] == [String(response.body.count)], "\(answer)")
        }
        let resource = HLSHTTPExchange.answer(answers[1], resourceMaxAge: 60)
        #expect(resource.headers["Cache-Control"] == ["public, max-age=60, immutable"] && resource.headers["Content-Type"] == ["video/mp4"])
        let playlist = HLSHTTPExchange.answer(answers[0], resourceMaxAge: 60)
        #expect(playlist.headers["Cache-Control"] == ["no-cache"] && playlist.headers["Content-Type"] == ["application/vnd.apple.mpegurl"])
        #expect(HLSHTTPExchange.answer(answers[4], resourceMaxAge: 60).status == .serviceUnavailable)
    }
}
