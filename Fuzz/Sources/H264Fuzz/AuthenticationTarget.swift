import H264
import RTSPMessages

extension FuzzTarget {
    /// The input as a `WWW-Authenticate` value: parsing never traps; every scheme and parameter
    /// name is non-empty and lowercased; written back as `scheme name="value", …` (values quoted
    /// by `RTSPAuthenticationChallenge.quoted`), the challenges parse to themselves — unless a
    /// value holds CR or LF, which quoting drops.
    static func wwwAuthenticate(_ bytes: [UInt8]) {
        let challenges = RTSPAuthenticationChallenge.parse(String(decoding: bytes, as: UTF8.self))
        for challenge in challenges {
            check(!challenge.scheme.isEmpty && challenge.scheme == challenge.scheme.lowercased(), "scheme \(challenge.scheme)")
            for parameter in challenge.parameters {
                check(!parameter.name.isEmpty && parameter.name == parameter.name.lowercased(), "parameter name \(parameter.name)")
            }
        }
        let values = challenges.flatMap(\.parameters).map(\.value)
        guard !values.contains(where: { $0.unicodeScalars.contains { $0 == "\r" || $0 == "\n" } }) else { return }
        let text = challenges.map { challenge in
            ([challenge.scheme] + challenge.parameters.map { "\($0.name)=" + RTSPAuthenticationChallenge.quoted($0.value) })
                .joined(separator: " ")
        }.joined(separator: ", ")
        check(RTSPAuthenticationChallenge.parse(text) == challenges, "challenges do not survive their own text: \(text)")
    }
}
