import H264
import RTSPMessages

extension FuzzTarget {
    /// The input as an `Authorization` value, as a server reads it: parsing never traps; a
    /// parsed value has a non-empty lowercased scheme, lowercased non-empty parameter names, and
    /// a token or parameters, not both; written back (`text`) it parses to itself — unless a
    /// value holds CR or LF, which quoting drops; Basic credentials, when they decode, encode
    /// back to a token that decodes to the same.
    static func authorization(_ bytes: [UInt8]) {
        guard let authorization = RTSPAuthorization.parse(String(decoding: bytes, as: UTF8.self)) else { return }
        check(!authorization.scheme.isEmpty && authorization.scheme == authorization.scheme.lowercased(), "scheme \(authorization.scheme)")
        check(authorization.token == nil || authorization.parameters.isEmpty, "a token and parameters")
        for parameter in authorization.parameters {
            check(!parameter.name.isEmpty && parameter.name == parameter.name.lowercased(), "parameter name \(parameter.name)")
        }
        if let (user, password) = authorization.basicCredentials {
            let again = RTSPAuthorization(scheme: "basic", token: Base64.encode(Array("\(user):\(password)".utf8)))
            check(again.basicCredentials?.user == user && again.basicCredentials?.password == password, "Basic credentials do not survive encoding")
        }
        guard !authorization.parameters.contains(where: { $0.value.unicodeScalars.contains { $0 == "\r" || $0 == "\n" } }) else { return }
        check(RTSPAuthorization.parse(authorization.text) == authorization, "the credentials do not survive their own text: \(authorization.text)")
    }
}
