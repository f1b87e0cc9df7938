#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import H264Streaming
import Testing

/// `StopSignal.catching` turns SIGTERM into its `onStop` however many catches came before it:
/// `receive --listen` catches while it waits for a publisher, then again while it records, and
/// a dispatch signal source per catch left SIGTERM ignored after the first.
@Suite(.serialized, .timeLimit(.minutes(1))) struct StopSignalTests {
    /// SIGTERM sent to this process (as `kill` or a service manager sends it) inside `catching`:
    /// true once its `onStop` has run.
    static func signalHeard() async throws -> Bool {
        let (stops, heard) = AsyncStream.makeStream(of: Void.self)
        return try await StopSignal.catching(onStop: {
            heard.yield()
            heard.finish()
        }) {
            kill(getpid(), SIGTERM)
            for await _ in stops { return true }
            return false
        }
    }

    /// Another part of the program listened for SIGTERM first (its own dispatch source, since
    /// cancelled): catching still hears it. Setting SIG_IGN then would replace libdispatch's
    /// handler, which it installs only for a signal's first source.
    @Test func aCatchAfterAnotherSignalSourceHearsTheSignal() async throws {
        let other = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
        other.setEventHandler {}
        other.resume()
        other.cancel()
        #expect(try await Self.signalHeard())
    }

    @Test func aCatchAfterAnotherHearsTheSignal() async throws {
        let first = try await StopSignal.catching(onStop: {}) { 1 }
        #expect(first == 1)
        #expect(try await Self.signalHeard(), "the second catch")
        #expect(try await Self.signalHeard(), "and a third")
    }
}
