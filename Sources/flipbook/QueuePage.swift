import Foundation
import FlipbookWorker

/// The HTML of `flipbook queue ui`: the counts, the failed jobs (filtered by code and recipe) and one job's
/// detail, in the gallery's colours. No script: Retry and Cancel are forms that POST with the session's CSRF
/// token. Every value from the database is escaped (`escape`), so an error message that reads `<script>` is
/// shown as those characters.
enum QueuePage {
    /// `text` with &, <, >, " and ' as entities.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for c in text.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    static func percentEncode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }

    static let style = """
        :root { color-scheme: light dark; --bg: #f6f6f4; --fg: #1b1b1b; --muted: #5c5c5c; --tile: #ffffff;
          --edge: #d9d9d6; --accent: #0b57d0; --bad: #b3261e; }
        @media (prefers-color-scheme: dark) {
          :root { --bg: #121314; --fg: #ececec; --muted: #a9a9a9; --tile: #1d1f21; --edge: #313437;
            --accent: #8ab4f8; --bad: #f2b8b5; }
        }
        * { box-sizing: border-box; }
        html, body { margin: 0; background: var(--bg); color: var(--fg);
          font: 14px/1.35 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
        header { position: sticky; top: 0; display: flex; gap: 1rem; align-items: baseline; padding: .75rem 1rem;
          background: var(--bg); border-bottom: 1px solid var(--edge); }
        header a { color: var(--accent); text-decoration: none; font-weight: 600; }
        main { padding: 12px 16px; }
        .counts { display: flex; flex-wrap: wrap; gap: 8px; margin: 0 0 1rem; padding: 0; list-style: none; }
        .counts li { background: var(--tile); border: 1px solid var(--edge); border-radius: 8px; padding: 8px 12px; min-width: 8rem; }
        .counts .n { display: block; font-size: 20px; font-weight: 600; }
        .muted { color: var(--muted); }
        table { border-collapse: collapse; width: 100%; background: var(--tile); border: 1px solid var(--edge); }
        th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--edge); vertical-align: top; }
        td.error { color: var(--bad); white-space: pre-wrap; word-break: break-word; }
        a { color: var(--accent); }
        form.inline { display: inline; }
        button { font: inherit; padding: 4px 10px; border-radius: 6px; border: 1px solid var(--edge); background: var(--tile); color: var(--fg); cursor: pointer; }
        button:hover, button:focus-visible { border-color: var(--accent); }
        pre { background: var(--tile); border: 1px solid var(--edge); border-radius: 8px; padding: 8px; white-space: pre-wrap; word-break: break-word; }
        .filters { margin: 0 0 .75rem; display: flex; gap: .5rem; align-items: center; }
        """

    static func document(title: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title><style>\(style)</style></head>
        <body><header><a href="/">flipbook queue</a><span class="muted">\(escape(title))</span></header>
        <main>\(body)</main></body></html>
        """
    }

    static func time(_ date: Date?) -> String {
        guard let date else { return "" }
        return ISO8601DateFormatter().string(from: date)
    }

    /// The front page: counts by state (with the last hour's and minute's done and failed), then the failed jobs.
    static func index(stats: QueueAdmin.Stats, failed: [QueueAdmin.JobSummary], code: String?, recipe: String?) -> String {
        var html = "<ul class=\"counts\">"
        for state in JobState.all {
            html += "<li id=\"count-\(state)\"><span class=\"n\">\(stats.states[state] ?? 0)</span>\(state)</li>"
        }
        html += "</ul><p class=\"muted\" id=\"rates\">last hour: \(stats.lastHour["done"] ?? 0) done, \(stats.lastHour["failed"] ?? 0) failed"
            + " (\(String(format: "%.1f", Double(stats.lastHour["done"] ?? 0) / 60)) done a minute); last minute: "
            + "\(stats.lastMinute["done"] ?? 0) done, \(stats.lastMinute["failed"] ?? 0) failed"
            + (stats.oldestAvailableSeconds.map { String(format: "; oldest waiting %.0f s", $0) } ?? "") + "</p>"
        html += "<h2>Failed jobs</h2><form class=\"filters\" method=\"get\" action=\"/\">"
            + "<label>code <input name=\"code\" value=\"\(escape(code ?? ""))\" size=\"14\"></label>"
            + "<label>recipe <input name=\"recipe\" value=\"\(escape(recipe ?? ""))\" size=\"14\"></label>"
            + "<button type=\"submit\">Filter</button></form>"
        html += "<table id=\"failed\"><thead><tr><th>id</th><th>source</th><th>recipe</th><th>attempts</th><th>error</th><th>finished</th></tr></thead><tbody>"
        for job in failed {
            html += "<tr data-id=\"\(job.id)\"><td><a href=\"/jobs/\(job.id)\">\(job.id)</a></td><td>\(escape(job.source))</td>"
                + "<td>\(escape(job.recipe))</td><td>\(job.attempts)/\(job.maxAttempts)</td>"
                + "<td class=\"error\"><b>\(escape(job.errorCode ?? ""))</b> \(escape(job.errorMessage ?? ""))</td>"
                + "<td>\(time(job.finishedAt))</td></tr>"
        }
        html += "</tbody></table>"
        if failed.isEmpty { html += "<p class=\"muted\">No failed jobs" + (code != nil || recipe != nil ? " match." : ".") + "</p>" }
        return document(title: "queue", body: html)
    }

    /// One job: its fields, result JSON, every attempt's error, and Retry / Cancel where they apply.
    static func detail(_ detail: QueueAdmin.JobDetail, csrf: String, notice: String?) -> String {
        let job = detail.job
        var html = ""
        if let notice { html += "<p id=\"notice\">\(escape(notice))</p>" }
        html += "<table id=\"job\"><tbody>"
        let rows: [(String, String)] = [
            ("id", "\(job.id)"), ("state", job.state), ("source", job.source), ("recipe", job.recipe),
            ("priority", "\(job.priority)"), ("attempts", "\(job.attempts) of \(job.maxAttempts)"),
            ("created", time(job.createdAt)), ("run after", time(job.runAfter)), ("started", time(job.startedAt)),
            ("finished", time(job.finishedAt)), ("worker", job.worker ?? ""), ("trace", detail.traceContext ?? ""),
        ]
        for (name, value) in rows { html += "<tr><th>\(name)</th><td id=\"field-\(name.replacingOccurrences(of: " ", with: "-"))\">\(escape(value))</td></tr>" }
        if let code = job.errorCode {
            html += "<tr><th>error</th><td class=\"error\" id=\"error\"><b>\(escape(code))</b> \(escape(job.errorMessage ?? ""))</td></tr>"
        }
        html += "</tbody></table><p>"
        if ["done", "failed", "cancelled"].contains(job.state) { html += action("retry", "Retry", job: job.id, csrf: csrf) }
        if ["available", "running"].contains(job.state) { html += action("cancel", "Cancel", job: job.id, csrf: csrf) }
        html += "</p><h2>Errors, oldest first</h2>"
        html += detail.errors.isEmpty ? "<p class=\"muted\">none</p>"
            : "<ol id=\"errors\">" + detail.errors.map { "<li><code>\(escape($0))</code></li>" }.joined() + "</ol>"
        html += "<h2>Result</h2>" + (detail.result.map { "<pre id=\"result\">\(escape(prettyJSON($0)))</pre>" } ?? "<p class=\"muted\">none</p>")
        return document(title: "job \(job.id)", body: html)
    }

    static func action(_ verb: String, _ label: String, job: Int64, csrf: String) -> String {
        "<form class=\"inline\" method=\"post\" action=\"/jobs/\(job)/\(verb)\"><input type=\"hidden\" name=\"csrf\" value=\"\(escape(csrf))\">"
            + "<button type=\"submit\" id=\"\(verb)\">\(label)</button></form> "
    }

    static func prettyJSON(_ text: String) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)),
              let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        else { return text }
        return String(decoding: data, as: UTF8.self)
    }

    static func message(_ title: String, _ text: String) -> String {
        document(title: title, body: "<p id=\"message\">\(escape(text))</p>")
    }
}
