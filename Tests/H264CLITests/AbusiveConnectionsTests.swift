import Foundation
import H264
import H264TestSupport
import Testing

/// 500 abusive connections against one server while one good viewer watches (issue 21's fault
/// must-show): `h264 serve --rtsp … --auth u:p` (Digest; a viewer `queueFrames` behind is
/// skipped to the next IDR), 50 abusers at a time of four kinds in turn (`AbusiveClient`:
/// garbage, endless header lines, wrong passwords in a loop, viewers that play and never read),
/// and FFmpeg playing over TCP with the password.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct AbusiveConnectionsTests {
    static let abusers = 500
    static let atOnce = 50
    /// The good viewer's recording, in seconds (the abuse takes about as long).
    static let viewing = 16.0
    /// The source's frame rate (the y4m's).
    static let framesPerSecond = 30.0
    /// `--client-queue-frames`: two seconds of frames (with a 64 KiB send buffer, ~0.3 s more):
    /// a slow reader holding on for `AbusiveClient.slowReaderHold` is skipped, while the good
    /// viewer is not for a scheduling hiccup of the busy machine.
    static let queueFrames = 60

    @Test func fiveHundredAbusersAndOneGoodViewer() throws {
        let server = try LoggingProcess(executable: CLI.executable, [
            "serve", TestFixtures.url("cars_320x240_30f.y4m").path, "--loop", "--port", "0", "--rtsp", "127.0.0.1:0", "--auth", "u:p",
            "--client-queue-frames", "\(Self.queueFrames)", "--send-buffer-size", "65536", "--preset", "ultrafast", "--threads", "1", "--quiet",
        ], untilListening: "rtsp")
        defer { server.kill() }
        let port = try #require(server.listeningPort(scheme: "rtsp"), "\(server.stderr)")
        let url = "rtsp://127.0.0.1:\(port)/live", pid = server.process.processIdentifier

        // The good viewer: each frame stamped with its arrival (the wall clock, 1/90000 s).
        let viewer = Locked<Subprocess.Output?>(nil), viewed = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let output = try? Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-use_wallclock_as_timestamps", "1",
                                                         "-rtsp_transport", "tcp", "-i", "rtsp://u:p@127.0.0.1:\(port)/live",
                                                         "-t", "\(Self.viewing)", "-c", "copy", "-f", "framecrc", "-"])
            viewer.withLock { $0 = output }
            viewed.signal()
        }
        try #require(server.wait(timeout: 20) { $0.contains { $0["event"] == "session-playing" } }, "\(server.stderr)")
        let goodViewer = server.events(named: "session-playing").first?["client"]

        let before = ProcessResources.residentKiB(pid), peak = Locked(before), sampling = Locked(true)
        Thread.detachNewThread {
            while sampling.withLock({ $0 }) {
                let now = ProcessResources.residentKiB(pid)
                peak.withLock { $0 = max($0, now) }
                Thread.sleep(forTimeInterval: 0.05) // sampling, not waiting for anything
            }
        }
        let started = Date()
        let outcomes = Self.abuse(url: url, port: port)
        let abuseSeconds = Date().timeIntervalSince(started)
        sampling.withLock { $0 = false }
        let after = ProcessResources.residentKiB(pid)
        _ = viewed.wait(timeout: .now() + 60)

        for kind in AbusiveClient.allCases {
            let theirs = outcomes.filter { $0.kind == kind }.map(\.outcome)
            #expect(theirs.count == Self.abusers / AbusiveClient.allCases.count)
            let unexpected = theirs.filter { !Self.isExpected($0, of: kind) }
            #expect(unexpected.isEmpty, "\(kind): \(unexpected.prefix(5)) (\(unexpected.count) of \(theirs.count))")
        }
        // The server skipped every slow reader (it fell `queueFrames` behind), never the good
        // viewer, and let go of each when it closed.
        let slowReaders = Self.abusers / AbusiveClient.allCases.count
        #expect(server.wait(timeout: 20) { $0.filter { $0["event"] == "session-ended" }.count >= slowReaders },
                "\(server.events(named: "session-ended").count) sessions ended")
        // (Nearly all: on a machine so busy that the server makes fewer than `queueFrames` frames
        // while a slow reader holds on, that one was not behind.)
        let skipped = Set(server.events(named: "viewer-skipped").compactMap { $0["client"] })
        #expect(skipped.count >= slowReaders * 9 / 10, "\(skipped.count) of \(slowReaders) slow readers skipped")
        #expect(!skipped.contains(goodViewer ?? "-"), "the good viewer (client \(goodViewer ?? "?")) was skipped")

        let output = try #require(viewer.withLock { $0 })
        #expect(output.status == 0, "\(output.stderr)")
        let rate = Self.rate(ofFramecrc: output.stdout)
        // What cannot race on a loaded machine: the viewer was never skipped (above), its frames
        // came throughout the abuse, and none waited longer than a generous bound (2.5 times its
        // queue of 2 s: a viewer held up longer is skipped). Its frame rate (30 fps when the
        // machine keeps up) is a measurement, not asserted here.
        #expect(rate.frames > Int(Self.viewing), "the good viewer got \(rate.frames) frames, abuse for \(abuseSeconds) s")
        #expect(rate.longestGap < 5, "the good viewer stalled for \(rate.longestGap) s (\(rate.framesPerSecond) fps)")
        if !ProcessResources.underSanitizer {
            #expect(peak.withLock { $0 } - before < Self.residentGrowthLimitKiB,
                    "VmRSS \(before) KiB before the abuse, at most \(peak.withLock { $0 }) KiB during it, \(after) KiB after")
        }
        #expect(server.stop() == 0, "\(server.stderr)")
    }

    /// How much the server's `VmRSS` may grow during the abuse. Measured: 27–28 MiB in the first
    /// 500 (a high-water mark: two more rounds of 500 on the same server added under 0.5 MiB),
    /// about what a dozen slow readers at once cost with their `queueFrames` frames packetized
    /// and waiting; a little over twice that is the bound.
    static let residentGrowthLimitKiB = 64 * 1024

    /// Runs the abusers, `atOnce` at a time, kinds in turn: what happened to each.
    static func abuse(url: String, port: Int) -> [(kind: AbusiveClient, outcome: AbusiveClient.Outcome)] {
        let next = Locked(0), outcomes = Locked([(kind: AbusiveClient, outcome: AbusiveClient.Outcome)]())
        let done = DispatchGroup()
        for _ in 0..<atOnce {
            done.enter()
            Thread.detachNewThread {
                while true {
                    let index = next.withLock { index in
                        defer { index += 1 }
                        return index
                    }
                    guard index < abusers else { break }
                    let kind = AbusiveClient.allCases[index % AbusiveClient.allCases.count]
                    let outcome = kind.run(url: url, port: port, index: index, user: "u", password: "p")
                    outcomes.withLock { $0.append((kind, outcome)) }
                }
                done.leave()
            }
        }
        done.wait()
        return outcomes.withLock { $0 }
    }

    /// Whether the server treated an abuser of `kind` as it should.
    static func isExpected(_ outcome: AbusiveClient.Outcome, of kind: AbusiveClient) -> Bool {
        switch (kind, outcome) {
        case (.garbage, .answered(let status)): (400..<600).contains(status)
        // Closed for what it sent, not for time: before the server's 10 s request timeout and
        // the client's own 10 s receive timeout (a bound of 5 s failed on a loaded machine,
        // 5.1–5.7 s with a load average of 10 on two cores).
        case (.garbage, .closed(let seconds)), (.endlessHeaders, .closed(let seconds)): seconds < 9.5
        case (.wrongPasswords, .refused(let count)): count == AbusiveClient.wrongPasswordRequests
        case (.slowReader, .played): true
        default: false
        }
    }

    /// The frame count of an FFmpeg framecrc whose timestamps are arrival times (1/90000 s), its frames per second
    /// from 2 s in (the join's kept GOP arrives at once) to its last frame, and the longest time
    /// between two frames there.
    static func rate(ofFramecrc output: [UInt8]) -> (frames: Int, framesPerSecond: Double, longestGap: Double) {
        let times = String(decoding: output, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            line.split(separator: ",").dropFirst(2).first.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }.map { $0 / 90_000 }
        }.sorted()
        let window = times.filter { $0 >= 2 }
        guard let first = window.first, let last = window.last, last > first else { return (times.count, 0, .infinity) }
        let gaps = zip(window.dropFirst(), window).map { $0 - $1 }
        return (times.count, Double(window.count - 1) / (last - first), gaps.max() ?? 0)
    }
}
