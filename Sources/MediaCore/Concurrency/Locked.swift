#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a `pthread_mutex_t`, with a condition variable for threads that wait
/// for the value to change (``wait(until:)``).
///
/// Why not `Synchronization.Mutex`: on Linux the standard library's `Mutex` is built on futex
/// calls that ThreadSanitizer does not see, so every access it protects is reported as a data
/// race and a TSan run of the session would be noise. A pthread mutex costs the same when
/// uncontended and is understood by the sanitizers (swift-nio's `NIOLock` takes the same route).
///
/// The one lock of the package: `package` access, so every module of swift-h264 (the sessions,
/// the command-line tool, the tests) uses it and no consumer sees it. It imports only the
/// platform's C library, as the standard library itself does.
///
/// `@unchecked Sendable`: the value is only reached through `withLock`-style methods, which
/// hold the mutex for the whole access.
package final class Locked<Value> {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var value: Value

    /// Guards `value`.
    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
        let conditionStatus = pthread_cond_init(condition, nil)
        precondition(conditionStatus == 0, "pthread_cond_init failed: \(conditionStatus)")
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Runs `body` with exclusive access to the value, then wakes every thread in
    /// ``wait(until:)`` to look at it again.
    package func withLockWakingWaiters<R>(_ body: (inout Value) -> R) -> R {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return body(&value)
    }

    /// Blocks until `condition` holds for the value; it is checked under the lock, again after
    /// each ``withLockWakingWaiters(_:)``.
    package func wait(until condition: (Value) -> Bool) {
        pthread_mutex_lock(mutex)
        while !condition(value) { pthread_cond_wait(self.condition, mutex) }
        pthread_mutex_unlock(mutex)
    }
}

/// `@unchecked Sendable` only where the value is `Sendable`: the mutex makes every access
/// exclusive, so a `Locked` may cross threads when what it guards may; a non-`Sendable` value
/// (a class with unsynchronized state, a pointer) stays in the isolation domain it was made in.
extension Locked: @unchecked Sendable where Value: Sendable {}
