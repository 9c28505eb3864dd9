/// Builds a short string from pieces and decimal integers straight into the new string's storage: one
/// allocation, where interpolation makes a string per integer and may regrow for each piece. For the text a
/// server makes per request (cache keys, file identities, Content-Range).
package struct UTF8Builder {
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0

    /// Room for any Int in decimal (sign included).
    package static let integerCapacity = 20

    fileprivate init(_ buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    package mutating func append(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            precondition(count + utf8.count <= buffer.count, "UTF8Builder capacity exceeded")
            UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[count...]).copyMemory(from: UnsafeRawBufferPointer(utf8))
            count += utf8.count
        }
    }

    package mutating func append(ascii byte: UInt8) {
        precondition(count < buffer.count, "UTF8Builder capacity exceeded")
        buffer[count] = byte
        count += 1
    }

    /// `value` in decimal, with a minus sign if negative.
    package mutating func append(decimal value: Int) {
        if value < 0 { append(ascii: UInt8(ascii: "-")) }
        append(decimal: UInt64(value.magnitude))
    }

    /// `value` in decimal. (Concrete integer types: a generic one is not specialised across modules.)
    package mutating func append(decimal value: UInt64) {
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        precondition(count + digits <= buffer.count, "UTF8Builder capacity exceeded")
        var magnitude = value
        var at = count + digits
        repeat {
            at -= 1
            buffer[at] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        count += digits
    }
}

extension String {
    /// The text `build` appends, which must fit in `capacity` bytes (a precondition).
    package init(utf8Capacity capacity: Int, _ build: (inout UTF8Builder) -> Void) {
        self.init(unsafeUninitializedCapacity: capacity) { buffer in
            var builder = UTF8Builder(buffer)
            build(&builder)
            return builder.count
        }
    }
}
