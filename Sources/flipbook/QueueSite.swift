import Foundation
import FlipbookWorker
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// The routes of `flipbook queue ui`. Each request is checked for the access token (when one is set), given a
/// session cookie if it has none, and answered from `QueueAdmin`; a POST must carry its session's CSRF token.
/// Sessions live in memory (at most `maxSessions`, the oldest dropped first): a restart logs everyone out of
/// their forms, nothing else.
final class QueueSite: Sendable {
    let admin: QueueAdmin
    let token: String?
    /// Session id -> CSRF token, in creation order.
    private let sessions = Mutex<(tokens: [String: String], order: [String])>(([:], []))
    static let maxSessions = 10_000
    static let sessionCookie = "flipbook_queue_session"
    static let tokenCookie = "flipbook_queue_token"

    init(admin: QueueAdmin, token: String?) {
        self.admin = admin
        self.token = token
    }

    /// 32 random bytes as hex, from the system's generator.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
    }

    /// Compares without stopping at the first difference.
    static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in x.indices { difference |= x[i] ^ y[i] }
        return difference == 0
    }

    /// The CSRF token of `session`, made on first use.
    func csrf(for session: String) -> String {
        sessions.withLock { s in
            if let token = s.tokens[session] { return token }
            let token = Self.randomToken()
            s.tokens[session] = token
            s.order.append(session)
            if s.order.count > Self.maxSessions {
                let old = s.order.removeFirst()
                s.tokens.removeValue(forKey: old)
            }
            return token
        }
    }

    func knownCSRF(for session: String) -> String? { sessions.withLock { $0.tokens[session] } }

    func serve(host: String, port: Int, logger: Logger) async throws {
        let router = Router()
        router.get("/") { request, _ in try await self.guarded(request) { session in try await self.index(request, session: session) } }
        router.get("/jobs/:id") { request, context in
            try await self.guarded(request) { session in try await self.detail(context.parameters.get("id", as: Int64.self), session: session) }
        }
        router.post("/jobs/:id/:action") { request, context in
            var request = request
            let body = try await request.collectBody(upTo: 16 * 1024)
            return try await self.guarded(request) { session in
                try await self.act(id: context.parameters.get("id", as: Int64.self), action: context.parameters.get("action") ?? "",
                                   form: String(buffer: body), session: session)
            }
        }
        let app = Application(router: router, configuration: .init(address: .hostname(host, port: port)), onServerRunning: { channel in
            printError("flipbook queue ui: http://\(host):\(channel.localAddress?.port ?? port)/")
        }, logger: logger)
        try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
    }

    /// The access token, then the session; `body` answers with the session id.
    private func guarded(_ request: Request, _ body: (String) async throws -> Response) async throws -> Response {
        var setCookies: [String] = []
        if let token {
            let cookie = request.cookies[Self.tokenCookie]?.value
            let bearer = request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
            let query = request.uri.queryParameters["token"].map(String.init)
            if let query, request.method == .get, Self.equal(query, token) {
                // Once from a link: kept in a cookie, and the token leaves the address bar.
                var headers = HTTPFields()
                headers[.location] = request.uri.path
                headers[values: .setCookie].append("\(Self.tokenCookie)=\(token); Path=/; HttpOnly; SameSite=Strict")
                return Response(status: .seeOther, headers: headers)
            }
            guard [cookie, bearer].contains(where: { $0.map { Self.equal($0, token) } ?? false }) else {
                return page(.unauthorized, QueuePage.message("unauthorized", "This page needs its access token: open it as /?token=TOKEN."))
            }
        }
        let session: String
        if let existing = request.cookies[Self.sessionCookie]?.value, knownCSRF(for: existing) != nil || request.method == .get {
            session = existing
        } else {
            session = Self.randomToken()
            setCookies.append("\(Self.sessionCookie)=\(session); Path=/; HttpOnly; SameSite=Strict")
        }
        var response: Response
        do {
            response = try await body(session)
        } catch let error as HTTPError {
            throw error
        } catch {
            response = page(.internalServerError, QueuePage.message("error", QueueOptions.describe(error)))
        }
        for cookie in setCookies { response.headers[values: .setCookie].append(cookie) }
        return response
    }

    private func page(_ status: HTTPResponse.Status, _ html: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        // No script runs on these pages, whatever a job's text says; forms post only here; no framing.
        headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        headers[.xContentTypeOptions] = "nosniff"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    private func index(_ request: Request, session: String) async throws -> Response {
        let parameter = { (name: String) -> String? in
            request.uri.queryParameters[Substring(name)].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
        }
        let code = parameter("code"), recipe = parameter("recipe")
        let stats = try await admin.stats()
        let failed = try await admin.list(state: "failed", recipe: recipe, code: code, limit: 200)
        return page(.ok, QueuePage.index(stats: stats, failed: failed, code: code, recipe: recipe))
    }

    private func detail(_ id: Int64?, session: String, notice: String? = nil) async throws -> Response {
        guard let id, let job = try await admin.job(id: id) else { return page(.notFound, QueuePage.message("not found", "No such job.")) }
        return page(.ok, QueuePage.detail(job, csrf: csrf(for: session), notice: notice))
    }

    private func act(id: Int64?, action: String, form: String, session: String) async throws -> Response {
        guard let id, ["retry", "cancel"].contains(action) else { return page(.notFound, QueuePage.message("not found", "No such action.")) }
        let fields = Dictionary(form.split(separator: "&").map { pair -> (String, String) in
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }, uniquingKeysWith: { first, _ in first })
        guard let expected = knownCSRF(for: session), let given = fields["csrf"], Self.equal(given, expected) else {
            return page(.forbidden, QueuePage.message("forbidden", "This form has expired or did not come from this page: reload the job and try again."))
        }
        let moved = action == "retry" ? try await admin.retry(ids: [id]) : try await admin.cancel(ids: [id])
        if moved.isEmpty {
            return try await detail(id, session: session, notice: "Job \(id) could not be \(action == "retry" ? "retried" : "cancelled") in its state.")
        }
        var headers = HTTPFields()
        headers[.location] = "/jobs/\(id)"
        return Response(status: .seeOther, headers: headers)
    }
}
