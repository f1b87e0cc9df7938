import H264
import H264SessionCore
import H264TestSupport
import Testing

/// `SessionLifecycle`, the one transition function of both sessions: each row applies events in
/// order and expects the state after each, or the error code it throws. (Moved here from the
/// encoder's tests of its former `EncoderLifecycle`; `prepared` is now `running`.)
@Suite(.ownThread) struct SessionLifecycleTransitionTests {
    enum Outcome: Equatable { case state(SessionLifecycle.State), error(MediaError.Code) }

    static let rows: [(String, [SessionLifecycle.Event], [Outcome])] = [
        ("configure, prepare", [.configure, .prepare, .prepared],
         [.state(.configured), .state(.configured), .state(.running)]),
        ("configure while preparing", [.prepare, .configure, .prepareFailed, .configure],
         [.state(.created), .error(.invalidState), .state(.created), .state(.configured)]),
        ("configure once running", [.run("encode"), .configure], [.state(.running), .error(.invalidState)]),
        ("a failed prepare keeps the state", [.configure, .prepare, .prepareFailed], [.state(.configured), .state(.configured), .state(.configured)]),
        ("use changes nothing", [.use("prewarm"), .configure, .use("rate change")], [.state(.created), .state(.configured), .state(.configured)]),
        ("decode runs", [.configure, .run("decode"), .use("waitForAsynchronousFrames"), .run("decode")],
         [.state(.configured), .state(.running), .state(.running), .state(.running)]),
        ("invalidate twice", [.invalidate, .invalidate], [.state(.invalidated), .state(.invalidated)]),
        ("every call after invalidate", [.invalidate, .configure, .prepare, .run("encode"), .use("completeFrames"), .run("switch")],
         [.state(.invalidated), .error(.invalidState), .error(.invalidState), .error(.invalidState), .error(.invalidState), .error(.invalidState)]),
        ("invalidated while preparing", [.prepare, .invalidate, .prepared], [.state(.created), .state(.invalidated), .error(.invalidState)]),
    ]

    @Test(arguments: rows.indices)
    func transitions(row: Int) {
        let (name, events, expected) = Self.rows[row]
        var lifecycle = SessionLifecycle(configureWhileRunning: "running")
        let outcomes = events.map { event -> Outcome in
            do throws(MediaError) { return .state(try lifecycle.apply(event)) } catch { return .error(error.code) }
        }
        #expect(outcomes == expected, "\(name)")
    }

    /// Every event but invalidate, in every state it is illegal in, throws the one error —
    /// `invalidState` with the one wording — and leaves the state as it was.
    static let illegal: [(String, SessionLifecycle.Event, String?, String)] = [
        ("configure", .configure, "configuration", "the running advice"),
        ("prepare", .prepare, nil, "prepare after invalidate"),
        ("encode", .run("encode"), nil, "encode after invalidate"),
        ("decode", .run("decode"), nil, "decode after invalidate"),
        ("completeFrames", .use("completeFrames"), nil, "completeFrames after invalidate"),
        ("waitForAsynchronousFrames", .use("waitForAsynchronousFrames"), nil, "waitForAsynchronousFrames after invalidate"),
    ]

    @Test(arguments: illegal.indices)
    func everyIllegalCallThrowsTheOneError(row: Int) {
        let (name, event, _, message) = Self.illegal[row]
        var invalidated = SessionLifecycle(configureWhileRunning: "the running advice")
        _ = try? invalidated.apply(.invalidate)
        var copy = invalidated
        do throws(MediaError) {
            try copy.apply(event)
            Issue.record("\(name) after invalidate did not throw")
        } catch {
            #expect(error.code == .invalidState, "\(name)")
            #expect(error.field == nil && error.message == "\(name) after invalidate", "\(name): \(error)")
        }
        #expect(copy.state == .invalidated)
        if case .configure = event {
            var running = SessionLifecycle(configureWhileRunning: "the running advice")
            _ = try? running.apply(.run("decode"))
            do throws(MediaError) {
                try running.apply(.configure)
                Issue.record("configure while running did not throw")
            } catch {
                #expect(error.code == .invalidState && error.field == "configuration" && error.message == message)
            }
            #expect(running.state == .running)
        }
    }

    @Test func theOutputHandlerError() {
        let error = SessionLifecycle.fromOutputHandler("completeFrames")
        #expect(error.code == .invalidState)
        #expect(error.message == "completeFrames cannot be called from the output handler")
    }

    /// Invalidate from many tasks at once, under a lock as the sessions apply it: every one
    /// succeeds, the state ends invalidated, and calls racing with it either run or throw the
    /// one error.
    @Test func invalidateIsIdempotentFromManyTasks() async {
        let lifecycle = Locked(SessionLifecycle(configureWhileRunning: "running"))
        let codes = Locked<[MediaError.Code]>([])
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                group.addTask {
                    if i % 2 == 0 {
                        lifecycle.withLock { _ = try? $0.apply(.invalidate) }
                    } else {
                        do throws(MediaError) {
                            try lifecycle.withLock { (l) throws(MediaError) in _ = try l.apply(.run("encode")) }
                        } catch {
                            codes.withLock { $0.append(error.code) }
                        }
                    }
                }
            }
        }
        #expect(lifecycle.withLock { $0.state } == .invalidated)
        #expect(codes.withLock { $0 }.allSatisfy { $0 == .invalidState })
    }
}
