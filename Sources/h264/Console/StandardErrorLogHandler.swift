import Foundation
import Logging

/// Prints the libraries' log messages as the command's own lines on standard error:
/// `h264 COMMAND: MESSAGE`, one line each (metadata and level are not shown). A command makes
/// its `Logger` with ``logger(command:quiet:)``.
struct StandardErrorLogHandler: LogHandler {
    /// `h264 serve`, `h264 receive`, …
    let prefix: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        FileHandle.standardError.write(Data("\(prefix): \(event.message)\n".utf8))
    }

    /// A logger printing `h264 COMMAND: …` lines; with `quiet`, only critical ones.
    static func logger(command: String, quiet: Bool) -> Logger {
        var logger = Logger(label: "h264.\(command)") { _ in StandardErrorLogHandler(prefix: "h264 \(command)") }
        logger.logLevel = quiet ? .critical : .info
        return logger
    }
}
