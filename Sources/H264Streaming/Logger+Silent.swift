public import Logging

extension Logger {
    /// The default logger of this module's servers and client: it drops every message, so a
    /// program that passes no logger hears nothing (the module never prints). Pass your own
    /// `Logger` to see sessions set up, played and ended, and what was refused.
    public static let streamingSilent = Logger(label: "h264.streaming") { _ in SwiftLogNoOpLogHandler() }
}
