import H264
import H264Streaming
import H264TestSupport
import Logging
import NIOConcurrencyHelpers

/// A real stream for the streaming tests: the access units of the conformance stream
/// `MIDR_MW_D.264` (176x144, an IDR every few pictures) as live frames.
enum StreamingFixtures {
    /// The stream's access units, in decode order, with its format.
    static let stream: (format: FormatDescription, frames: [LiveFrame]) = {
        var receiver = AccessUnitReceiver()
        // The fixture is part of the checkout: a missing one is a broken checkout.
        receiver.append(try! TestFixtures.data("conformance/MIDR_MW_D.264"))
        var units: [AccessUnit] = []
        while let event = receiver.next() { if case .accessUnit(let unit) = event { units.append(unit) } }
        for case .accessUnit(let unit) in receiver.finish() { units.append(unit) }
        let format = units.compactMap(\.formatDescription).first!
        return (format, units.map { LiveFrame(avcc: $0.data, formatDescription: $0.formatDescription ?? format, isKeyframe: $0.isIDR) })
    }()

    /// The stream's format (its SPS and PPS).
    static var format: FormatDescription { stream.format }
}

/// The messages a library logged, for tests that check what it reported.
final class LogLines: Sendable {
    private let lines = NIOLockedValueBox<[String]>([])

    func append(_ line: String) { lines.withLockedValue { $0.append(line) } }
    var all: [String] { lines.withLockedValue { $0 } }

    /// A logger whose messages (`info` and above) land here.
    var logger: Logger {
        Logger(label: "test") { _ in Handler(lines: self) }
    }

    private struct Handler: LogHandler {
        let lines: LogLines
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { lines.append("\(event.message)") }
    }
}
