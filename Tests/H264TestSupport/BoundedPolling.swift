import Foundation

/// Waiting for a condition that no event announces (a file a peer finishes, a port a peer
/// opens): checked every 50 ms, for a bounded time.
public enum BoundedPolling {
    /// Polls `condition` every 50 ms for at most `seconds`; true once it holds.
    public static func waitFor(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return condition()
    }
}
