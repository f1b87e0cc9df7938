import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The progress line of `encode`, `decode` and `transcode` on a terminal (rewritten in place
/// every 250 ms), and the elapsed time of their summaries.
struct ProgressLine {
    /// True when standard error is a terminal and the command is not `--quiet`.
    let isShown: Bool
    /// True with `--quiet`: no summary either.
    let quiet: Bool
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant
    private var last: ContinuousClock.Instant

    init(quiet: Bool) {
        self.quiet = quiet
        isShown = !quiet && isatty(2) != 0
        started = clock.now
        last = started
    }

    /// Seconds since the command started.
    var elapsed: Double { (clock.now - started) / .seconds(1) }

    /// What a summary line starts with: `\r` over a progress line.
    var summaryPrefix: String { isShown ? "\r" : "" }

    /// Writes `\rTEXT   ` when shown and 250 ms have passed since the last; `text` gets the
    /// seconds elapsed.
    mutating func update(_ text: (_ elapsed: Double) -> String) {
        guard isShown, clock.now - last > .milliseconds(250) else { return }
        last = clock.now
        FileHandle.standardError.write(Data(("\r" + text(elapsed) + "   ").utf8))
    }

    /// Writes `\rN frames, F fps   ` (``update(_:)``).
    mutating func update(frames: () -> Int) {
        update { elapsed in
            let count = frames()
            return "\(count) frames, \(Self.format(Double(count) / max(elapsed, 0.001))) fps"
        }
    }

    /// Writes the summary of `encode`, `decode` and `transcode` on standard error, unless
    /// `quiet`: `VERB N frames[ SIZE] in T s (F fps)DETAILS`, F counting `rateFrames` (default
    /// `frames`), over the progress line when one is shown.
    func summarize(_ verb: String, frames: Int, size: String = "", rateFrames: Int? = nil, _ details: String) {
        guard !quiet else { return }
        let elapsed = self.elapsed, fps = Self.format(Double(rateFrames ?? frames) / max(elapsed, 0.001))
        let line = "\(summaryPrefix)\(verb) \(frames) frames\(size) in \(Self.format(elapsed)) s (\(fps) fps)\(details)\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// A number with at most one decimal (`12`, `12.5`).
    static func format(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
