extension RTSPServer {
    /// Who may use an ``RTSPServer``'s paths, and how they prove it: the users and their
    /// passwords, checked with Digest (RFC 7616, the default) or Basic (RFC 7617)
    /// authentication. Set for the whole server (``Configuration/authentication``) or for one
    /// path (``mount(_:broadcaster:format:authentication:)-(_,_,FormatDescription,_)``,
    /// ``mountRecording(_:authentication:)``), where it replaces the server's.
    ///
    /// Every request but OPTIONS (and GET_PARAMETER naming the connection's own session, a
    /// keepalive) needs valid credentials; without them it gets `401 Unauthorized` with
    /// `WWW-Authenticate`. Digest challenges offer SHA-256 and then MD5 (FFmpeg and GStreamer
    /// answer MD5), `qop="auth"` (a response without `qop`, RFC 2069's form as GStreamer sends
    /// it, is accepted too), the realm and an `opaque`. Nonces are made by the server, expire
    /// after ``nonceLifetime`` (an expired nonce with an otherwise right response gets
    /// `stale=TRUE`, and clients retry) and are checked without a table. Passwords and digests
    /// are compared in constant time, and no password is logged.
    ///
    /// Printing a value shows the users and the method, never a password.
    ///
    /// ```swift
    /// var configuration = RTSPServer.Configuration()
    /// configuration.authentication = .init(users: ["viewer": "secret"])
    /// let server = try await RTSPServer.start(host: "0.0.0.0", port: 8554, group: group, configuration: configuration)
    /// ```
    public struct Authentication: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
        /// How credentials are sent.
        public enum Method: String, Sendable, Hashable, CaseIterable {
            /// Digest access authentication (RFC 7616): the password never crosses the network.
            case digest
            /// Basic authentication (RFC 7617): the password is sent in base64, readable by
            /// anyone who sees the connection.
            case basic
        }

        /// The users and their passwords.
        public var users: [String: String]
        /// Digest (the default) or Basic.
        public var method: Method
        /// The protection space named in the challenges (`realm=`).
        public var realm: String
        /// How long a Digest nonce is good for.
        public var nonceLifetime: Duration

        /// Requires one of `users` (name → password), with `method`, in `realm`; Digest nonces
        /// expire after `nonceLifetime`.
        public init(users: [String: String], method: Method = .digest, realm: String = "swift-h264",
                    nonceLifetime: Duration = .seconds(60)) {
            self.users = users
            self.method = method
            self.realm = realm
            self.nonceLifetime = nonceLifetime
        }

        /// `Authentication(digest, realm "swift-h264", users: a, b)`, without the passwords.
        public var description: String {
            "Authentication(\(method.rawValue), realm \"\(realm)\", users: \(users.keys.sorted().joined(separator: ", ")))"
        }

        /// The same as ``description``: the passwords stay out of debug output too.
        public var debugDescription: String { description }
    }
}
