import FlipbookCore

/// A small reader for the XML documents AWS answers with (STS's AssumeRoleWithWebIdentityResponse, S3's
/// ListBucketResult, InitiateMultipartUploadResult, CompleteMultipartUploadResult and Error): elements by
/// name and their text, with the five predefined entities, character references and CDATA decoded.
/// Not a general XML parser: DOCTYPE (and so any DTD or entity definition) is refused, attributes are skipped,
/// namespace prefixes are ignored when matching names.
///
/// Parsing walks the bytes once and keeps one node per element (name, text, children): memory is about
/// twice the document's size. Documents nest at most 64 deep.
package struct XMLElements: Sendable {
    private struct Node: Sendable {
        var name: String
        var text: [UInt8] = []
        var children: [Int] = []
    }

    private var nodes: [Node] = []

    /// The root element's local name (`ListBucketResult`, `Error`, ...).
    package var rootName: String { nodes.first?.name ?? "" }

    /// Parses `document`. Malformed XML, a DOCTYPE, mismatched tags, unknown entities, nesting deeper than 64
    /// or a document without an element throw `corrupt`.
    package init(parsing document: some Collection<UInt8>) throws {
        var parser = Parser(bytes: Array(document))
        nodes = try parser.parse()
    }

    /// The text of the first element named `name` (document order), or nil when there is none. Text is the
    /// element's own character data, entities decoded, untrimmed (S3 keys may start or end with spaces).
    package func first(_ name: String) -> String? {
        nodes.first { $0.name == name }.map { String(decoding: $0.text, as: UTF8.self) }
    }

    /// For every element named `name`, in document order: the text of each of its child elements by name
    /// (the first child of a name wins). `all("Contents")` of a ListBucketResult gives `Key`, `ETag`,
    /// `Size`, ... per object.
    package func all(_ name: String) -> [[String: String]] {
        nodes.filter { $0.name == name }.map { node in
            var fields: [String: String] = [:]
            for child in node.children where fields[nodes[child].name] == nil {
                fields[nodes[child].name] = String(decoding: nodes[child].text, as: UTF8.self)
            }
            return fields
        }
    }

    /// The texts of every element named `name`, in document order.
    package func texts(_ name: String) -> [String] {
        nodes.filter { $0.name == name }.map { String(decoding: $0.text, as: UTF8.self) }
    }

    /// ``first(_:)`` of `document` parsed once.
    package static func first(_ name: String, in document: some Collection<UInt8>) throws -> String? {
        try XMLElements(parsing: document).first(name)
    }

    /// ``all(_:)`` of `document` parsed once.
    package static func all(_ name: String, in document: some Collection<UInt8>) throws -> [[String: String]] {
        try XMLElements(parsing: document).all(name)
    }

    private struct Parser {
        let bytes: [UInt8]
        var i = 0
        var nodes: [Node] = []
        var stack: [Int] = []

        init(bytes: [UInt8]) { self.bytes = bytes }

        func fail(_ why: String) -> FlipbookError {
            FlipbookError(.corrupt, "the XML response is malformed: \(why) at byte \(i)")
        }

        func starts(with literal: String) -> Bool {
            let l = Array(literal.utf8)
            return i + l.count <= bytes.count && bytes[i..<(i + l.count)].elementsEqual(l)
        }

        /// Moves past `terminator`, throwing when the document ends first.
        mutating func skip(past terminator: String) throws -> Range<Int> {
            let t = Array(terminator.utf8)
            let start = i
            while i + t.count <= bytes.count {
                if bytes[i..<(i + t.count)].elementsEqual(t) {
                    let range = start..<i
                    i += t.count
                    return range
                }
                i += 1
            }
            throw fail("unterminated \(terminator)")
        }

        mutating func parse() throws -> [Node] {
            if starts(with: "\u{FEFF}") { i += 3 }
            while i < bytes.count {
                if bytes[i] == UInt8(ascii: "<") {
                    if starts(with: "<?") {
                        _ = try skip(past: "?>")
                    } else if starts(with: "<!--") {
                        i += 4
                        _ = try skip(past: "-->")
                    } else if starts(with: "<![CDATA[") {
                        i += 9
                        let range = try skip(past: "]]>")
                        try appendText(bytes[range])
                    } else if starts(with: "<!") {
                        throw fail("DOCTYPE and declarations are not accepted")
                    } else if starts(with: "</") {
                        try endTag()
                    } else {
                        try startTag()
                    }
                } else {
                    let start = i
                    while i < bytes.count, bytes[i] != UInt8(ascii: "<") { i += 1 }
                    try appendText(decode(bytes[start..<i]))
                }
            }
            guard !nodes.isEmpty else { throw fail("no element") }
            guard stack.isEmpty else { throw fail("<\(nodes[stack.last!].name)> is not closed") }
            return nodes
        }

        mutating func appendText(_ text: some Collection<UInt8>) throws {
            guard let top = stack.last else {
                guard text.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) else { throw fail("text outside the root element") }
                return
            }
            nodes[top].text.append(contentsOf: text)
        }

        mutating func name() throws -> String {
            let start = i
            while i < bytes.count, !(bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D
                                     || bytes[i] == UInt8(ascii: ">") || bytes[i] == UInt8(ascii: "/")) { i += 1 }
            guard i > start else { throw fail("an empty tag name") }
            let full = bytes[start..<i]
            let local = full.lastIndex(of: UInt8(ascii: ":")).map { full[full.index(after: $0)...] } ?? full
            return String(decoding: local, as: UTF8.self)
        }

        mutating func startTag() throws {
            i += 1
            let name = try name()
            // Attributes are skipped; a quoted value may hold '>' or '/'.
            var quote: UInt8?
            while i < bytes.count {
                let b = bytes[i]
                if let q = quote {
                    if b == q { quote = nil }
                } else if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") {
                    quote = b
                } else if b == UInt8(ascii: ">") {
                    break
                }
                i += 1
            }
            guard i < bytes.count else { throw fail("unterminated <\(name)>") }
            let selfClosing = bytes[i - 1] == UInt8(ascii: "/")
            i += 1
            if stack.isEmpty && !nodes.isEmpty { throw fail("a second root element <\(name)>") }
            guard stack.count < 64 else { throw fail("elements nested deeper than 64") }
            let index = nodes.count
            nodes.append(Node(name: name))
            if let parent = stack.last { nodes[parent].children.append(index) }
            if !selfClosing { stack.append(index) }
        }

        mutating func endTag() throws {
            i += 2
            let name = try name()
            while i < bytes.count, bytes[i] != UInt8(ascii: ">") {
                guard bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D else { throw fail("junk in </\(name)>") }
                i += 1
            }
            guard i < bytes.count else { throw fail("unterminated </\(name)>") }
            i += 1
            guard let top = stack.popLast(), nodes[top].name == name else { throw fail("</\(name)> closes nothing open") }
        }

        /// Character data with entities and character references decoded and line ends normalised to LF.
        func decode(_ raw: ArraySlice<UInt8>) throws -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(raw.count)
            var j = raw.startIndex
            while j < raw.endIndex {
                let b = raw[j]
                if b == UInt8(ascii: "&") {
                    guard let semicolon = raw[j...].firstIndex(of: UInt8(ascii: ";")), semicolon - j <= 12 else { throw fail("an unterminated entity") }
                    let entity = String(decoding: raw[(j + 1)..<semicolon], as: UTF8.self)
                    switch entity {
                    case "amp": out.append(UInt8(ascii: "&"))
                    case "lt": out.append(UInt8(ascii: "<"))
                    case "gt": out.append(UInt8(ascii: ">"))
                    case "quot": out.append(UInt8(ascii: "\""))
                    case "apos": out.append(UInt8(ascii: "'"))
                    default:
                        let value: UInt32?
                        if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                            value = UInt32(entity.dropFirst(2), radix: 16)
                        } else if entity.hasPrefix("#") {
                            value = UInt32(entity.dropFirst(), radix: 10)
                        } else {
                            throw fail("an unknown entity &\(entity);")
                        }
                        guard let value, value != 0, let scalar = Unicode.Scalar(value) else { throw fail("a bad character reference &\(entity);") }
                        out.append(contentsOf: Array(String(Character(scalar)).utf8))
                    }
                    j = semicolon + 1
                } else if b == 0x0D {
                    out.append(0x0A)
                    j += 1
                    if j < raw.endIndex, raw[j] == 0x0A { j += 1 }
                } else {
                    out.append(b)
                    j += 1
                }
            }
            return out
        }
    }
}
