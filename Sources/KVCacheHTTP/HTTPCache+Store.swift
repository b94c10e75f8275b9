#if HTTP
import Foundation
import HTTPTypes
import KVCache

/// What may be stored (RFC 9111 §3), how variants are kept (§4.1), and invalidation (§4.4).
extension HTTPCache {
    /// `bodyCount` is the body's size where it is known before it is read.
    func isStorable(_ response: HTTPResponse, bodyCount: Int64?, for request: HTTPRequest) -> Bool {
        guard request.method == .get, (bodyCount ?? 0) <= Int64(configuration.maximumBodySize) else { return false }
        let requestControl = CacheControl(request.headerFields[values: .cacheControl])
        if requestControl.has("no-store") { return false }
        let status = response.status.code
        guard status >= 200, status != 206, status != 304 else { return false }
        let control = CacheControl(response.headerFields[values: .cacheControl])
        if control.has("must-understand") {
            // A cache that understands the status code may ignore no-store (§5.2.2.3).
            guard Self.understood.contains(status) else { return false }
        } else if control.has("no-store") {
            return false
        }
        let shared = configuration.mode == .shared
        if shared && control.has("private") { return false }
        if shared && request.headerFields[.authorization] != nil
            && !(control.has("public") || control.has("s-maxage") || control.has("must-revalidate")) {
            return false
        }
        if Self.varyNames(of: response).contains("*") { return false }
        let explicit = response.headerFields[.expires] != nil || control.has("max-age")
            || (shared && control.has("s-maxage")) || control.has("public") || (!shared && control.has("private"))
        return explicit || Self.heuristicallyCacheable.contains(status)
    }

    /// A body in memory over the large-body threshold goes to a disk value of its own first.
    func store(_ response: HTTPResponse, body: StoredBody, for request: HTTPRequest, key: String, record: HTTPCacheRecord?,
               requestTime: Double, responseTime: Double) async {
        var body = body
        if case .bytes(let bytes) = body, bytes.count > configuration.largeBodyThreshold {
            let bodyKey = StoredBody.newFileKey()
            // Not stored is an answer too: the request was answered anyway.
            guard (try? await storage.disk.setValue(bytes, forKey: bodyKey)) != nil else { return }
            body = .file(key: bodyKey, count: Int64(bytes.count))
        }
        let varyValues = Self.varyNames(of: response).map {
            StoredResponse.VaryValue(name: $0, value: request.normalizedValue(of: $0))
        }
        let variant = StoredResponse(response: response, body: body, varyValues: varyValues,
                                     requestTime: requestTime, responseTime: responseTime)
        // The new response replaces whatever answered this request before.
        var variants = (record?.variants ?? []).filter { !$0.matches(request) }
        var dropped = (record?.variants ?? []).filter { $0.matches(request) }
        variants.append(variant)
        if variants.count > configuration.maximumVariants {
            dropped += variants.prefix(variants.count - configuration.maximumVariants)
            variants.removeFirst(variants.count - configuration.maximumVariants)
        }
        await save(HTTPCacheRecord(variants: variants), forKey: key)
        removeBodies(of: dropped)
    }

    /// Removes the body values of responses no record keeps any more. (One that another
    /// record written meanwhile still names is then missing there: that response counts as
    /// not stored.)
    func removeBodies(of variants: [StoredResponse]) {
        for variant in variants {
            if case .file(let key, _) = variant.body { try? storage.disk.removeValue(forKey: key) }
        }
    }

    /// Removes the record under `key` and its body values.
    func removeRecord(forKey key: String) async {
        let record = await load(key)
        try? await storage.removeValue(forKey: key)
        if let record { removeBodies(of: record.variants) }
    }

    /// The record under `key`, or nil when there is none or it cannot be read (a damaged or
    /// foreign value counts as a miss, and the next store replaces it).
    func load(_ key: String) async -> HTTPCacheRecord? {
        (try? await storage.value(forKey: key)) ?? nil
    }

    /// A failed write leaves the cache without this response: the request was answered anyway.
    func save(_ record: HTTPCacheRecord, forKey key: String) async {
        try? await storage.setValue(record, forKey: key)
    }

    /// After an unsafe method succeeded: the target URL and the same-origin URLs its
    /// `Location` and `Content-Location` name (§4.4).
    func invalidate(after request: HTTPRequest, key: String, response: HTTPResponse) async {
        await removeRecord(forKey: key)
        guard let scheme = request.scheme, let authority = request.authority, let path = request.path,
              let base = URL(string: "\(scheme)://\(authority)\(path)")
        else { return }
        for name in [HTTPField.Name.location, .contentLocation] {
            guard let value = response.headerFields[name], value.utf8.count <= 8192,
                  let target = URL(string: value, relativeTo: base)?.absoluteURL,
                  let components = URLComponents(url: target, resolvingAgainstBaseURL: false),
                  let targetScheme = components.scheme, let host = components.host
            else { continue }
            let targetAuthority = components.port.map { "\(host):\($0)" } ?? host
            guard targetScheme.lowercased() == scheme.lowercased(), targetAuthority.lowercased() == authority.lowercased()
            else { continue }
            let targetPath = (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)
                + (components.percentEncodedQuery.map { "?\($0)" } ?? "")
            let targetKey = Self.key(scheme: scheme, authority: authority, path: targetPath)
            await removeRecord(forKey: targetKey)
        }
    }

    /// The lower-cased field names a response's `Vary` lists.
    static func varyNames(of response: HTTPResponse) -> [String] {
        response.headerFields[values: .vary]
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingHTTPWhitespace().lowercased() }
            .filter { !$0.isEmpty }
    }
}

extension HTTPCacheRecord {
    /// The newest stored response whose `Vary` fields match the request's (§4.1).
    func selectIndex(for request: HTTPRequest) -> Int? {
        if let only = onlyVariant { return only.matches(request) ? 0 : nil }
        let variants = variants
        return variants.indices.last { variants[$0].matches(request) }
    }
}

extension StoredResponse {
    func matches(_ request: HTTPRequest) -> Bool {
        varyValues.isEmpty || varyValues.allSatisfy { $0.name != "*" && request.normalizedValue(of: $0.name) == $0.value }
    }

    /// Whether a response's validators are this stored response's (§4.3.5): the same strong
    /// ETag, or else the same Last-Modified, or neither has any.
    func sameValidators(as response: HTTPResponse) -> Bool {
        let etag = values("etag").first
        let lastModified = values("last-modified").first
        if let newTag = response.headerFields[.eTag] ?? nil, let etag { return newTag == etag && !etag.hasPrefix("W/") }
        if let newDate = response.headerFields[.lastModified], let lastModified { return newDate == lastModified }
        return etag == nil && lastModified == nil && response.headerFields[.eTag] == nil
            && response.headerFields[.lastModified] == nil
    }
}

extension HTTPRequest {
    /// A field's value as `Vary` compares it: lines joined, list members trimmed; nil when absent.
    func normalizedValue(of name: String) -> String? {
        guard let fieldName = HTTPField.Name(name) else { return nil }
        let lines = headerFields[values: fieldName]
        guard !lines.isEmpty else { return nil }
        return lines.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
            .map { $0.trimmingHTTPWhitespace() }
            .joined(separator: ",")
    }
}
#endif
