import FlipbookCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One shared AWS configuration or credentials file (`~/.aws/config`, `~/.aws/credentials`), parsed the way the
/// aws CLI (Python's configparser under botocore) reads it: `[section]` headers, `key = value` or `key: value`
/// lines with keys lower-cased and both sides trimmed, whole-line comments starting with `#` or `;` (a `#`
/// after a value is part of the value, as in the CLI), and a key with an empty value followed by indented
/// `name = value` lines as a nested sub-section (`s3 =` / `  addressing_style = path`). Repeated sections merge
/// and a repeated key keeps its last value.
package struct AWSConfigFile: Sendable, Equatable {
    /// One `[section]`: its plain values and its nested sub-sections.
    package struct Section: Sendable, Equatable {
        /// `key = value` lines; keys lower case.
        package var values: [String: String] = [:]
        /// `key =` followed by indented `name = value` lines; outer keys lower case, inner keys as written.
        package var nested: [String: [String: String]] = [:]
    }

    /// The sections by their name as written between the brackets, trimmed (`default`, `profile dev`,
    /// `services local`).
    package var sections: [String: Section] = [:]

    /// Files larger than this are refused rather than read (`limit-exceeded`).
    package static let sizeLimit = 4 << 20

    /// Parses `text`; `path` only names the file in errors. A line that is none of the above, or a key before
    /// any section, throws `invalid-argument` naming the file and line, as the CLI refuses such a file.
    package init(parsing text: String, path: String) throws {
        var current: String?
        var lastKey: String?
        var lastIndent = 0
        // Continuation lines of the last key, and whether its own line had an empty value.
        var continuation: [String] = []
        var lastValueWasEmpty = false

        func finish() throws {
            defer { continuation = []; lastKey = nil }
            guard let section = current, let key = lastKey else { return }
            if continuation.isEmpty { return }
            if lastValueWasEmpty {
                var nested: [String: String] = [:]
                for line in continuation {
                    guard let eq = line.firstIndex(of: "=") else {
                        throw FlipbookError(.invalidArgument, "\(path): the nested value \"\(line)\" under \"\(key)\" in [\(section)] has no \"=\"")
                    }
                    nested[Self.trim(line[..<eq])] = Self.trim(line[line.index(after: eq)...])
                }
                sections[section]!.nested[key] = nested
                sections[section]!.values[key] = nil
            } else {
                sections[section]!.values[key]! += "\n" + continuation.joined(separator: "\n")
            }
        }

        var lineNumber = 0
        // Line ends as Python's universal newlines: LF, CRLF (one Character in Swift) or CR.
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            lineNumber += 1
            let content = Self.trim(line)
            if content.hasPrefix("#") || content.hasPrefix(";") { continue }
            if content.isEmpty { continue }
            let indent = line.prefix { $0 == " " || $0 == "\t" }.count
            if lastKey != nil, indent > lastIndent {
                continuation.append(content)
                continue
            }
            try finish()
            if content.hasPrefix("[") {
                guard let close = content.firstIndex(of: "]") else {
                    throw FlipbookError(.invalidArgument, "\(path) line \(lineNumber): a section header without \"]\"")
                }
                let name = Self.trim(content[content.index(after: content.startIndex)..<close])
                current = name
                if sections[name] == nil { sections[name] = Section() }
                continue
            }
            guard let section = current else {
                throw FlipbookError(.invalidArgument, "\(path) line \(lineNumber): a setting before any [section]")
            }
            guard let delimiter = content.firstIndex(where: { $0 == "=" || $0 == ":" }) else {
                throw FlipbookError(.invalidArgument, "\(path) line \(lineNumber): \"\(content)\" is neither a [section] nor key = value")
            }
            let key = Self.trim(content[..<delimiter]).lowercased()
            let value = Self.trim(content[content.index(after: delimiter)...])
            sections[section]!.values[key] = value
            sections[section]!.nested[key] = nil
            lastKey = key
            lastIndent = indent
            lastValueWasEmpty = value.isEmpty
        }
        try finish()
    }

    /// Reads and parses the file at `path`; nil when there is no such file. Unreadable files, files over
    /// ``sizeLimit`` and malformed ones throw.
    package static func load(path: String) throws -> AWSConfigFile? {
        guard let bytes = try readSmallFile(path, limit: sizeLimit, what: "AWS configuration file") else { return nil }
        return try AWSConfigFile(parsing: String(decoding: bytes, as: UTF8.self), path: path)
    }

    /// A config file's profile: `[profile NAME]`, or `[default]` for "default" (`[profile default]` too, which
    /// wins). Quotes around a name (`[profile "my dev"]`) are dropped.
    package func configProfile(_ name: String) -> Section? {
        let plain = name == "default" ? sections["default"] : nil
        var prefixed: Section?
        for (header, section) in sections {
            let words = header.split(maxSplits: 1, whereSeparator: { $0 == " " || $0 == "\t" })
            if words.count == 2, words[0] == "profile", Self.unquote(Self.trim(words[1])) == name {
                prefixed = prefixed.map { Self.merged($0, over: section) } ?? section
            }
        }
        if let plain, let prefixed { return Self.merged(plain, over: prefixed) }
        return plain ?? prefixed
    }

    /// A `[services NAME]` section of a config file.
    package func servicesSection(_ name: String) -> Section? {
        sections.first { header, _ in
            let words = header.split(maxSplits: 1, whereSeparator: { $0 == " " || $0 == "\t" })
            return words.count == 2 && words[0] == "services" && Self.unquote(Self.trim(words[1])) == name
        }?.value
    }

    /// A credentials file's profile: the section named `name` exactly.
    package func credentialsProfile(_ name: String) -> Section? { sections[name] }

    /// `base` with `top`'s values and sub-sections laid over it.
    static func merged(_ base: Section, over top: Section) -> Section {
        var out = base
        out.values.merge(top.values) { $1 }
        out.nested.merge(top.nested) { $1 }
        return out
    }

    static func trim(_ text: some StringProtocol) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(String.UnicodeScalarView(scalars[first...last]))
    }

    static func unquote(_ text: String) -> String {
        text.count >= 2 && text.hasPrefix("\"") && text.hasSuffix("\"") ? String(text.dropFirst().dropLast()) : text
    }
}

/// The bytes of the file at `path`, or nil when it does not exist; a file larger than `limit` throws
/// `limit-exceeded` before it is read, any other failure `io`. `what` names the file in errors.
func readSmallFile(_ path: String, limit: Int, what: String) throws -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else {
        let code = errno
        if code == ENOENT || code == ENOTDIR { return nil }
        throw FlipbookError(.io, "cannot open the \(what) \(path)", underlying: String(cString: strerror(code)))
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw FlipbookError(.io, "cannot read the \(what) \(path)", underlying: String(cString: strerror(errno))) }
    guard (info.st_mode & S_IFMT) == S_IFREG else { throw FlipbookError(.io, "the \(what) \(path) is not a regular file") }
    guard Int(info.st_size) <= limit else {
        throw FlipbookError(.limitExceeded, "the \(what) \(path) is \(info.st_size) bytes, over the limit of \(limit)")
    }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16 << 10)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR { continue }
            throw FlipbookError(.io, "cannot read the \(what) \(path)", underlying: String(cString: strerror(errno)))
        }
        if count == 0 { break }
        bytes += chunk[..<count]
        guard bytes.count <= limit else { throw FlipbookError(.limitExceeded, "the \(what) \(path) grew over the limit of \(limit) bytes") }
    }
    return bytes
}
