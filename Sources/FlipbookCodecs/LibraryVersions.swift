import CFFmpeg
import CGIF
import CHeifLoader
import CJPEG
import CLCMS2
import CWebP
import FlipbookCore
#if canImport(Glibc)
import Glibc
#endif

/// The versions of the C libraries Flipbook works through, as this process has them, for `flipbook
/// --version` and the `flipbook_build_info` metric. libav and libheif are opened with dlopen on first use
/// (loader.c, CHeifLoader); `loadAll` opens them so their versions can be read (about 25 ms and 30 MB once;
/// a command that only prints its version pays it, a worker or server has them loaded anyway).
package enum LibraryVersions {
    /// One library: its name and version. `runtime` is what the loaded library says of itself; where the
    /// library has no such call (libjpeg-turbo, giflib), `built` is the version of the headers Flipbook
    /// was compiled with and the loaded file's name is kept in `file`.
    package struct Entry: Sendable, Equatable {
        package var name: String
        package var built: String?
        package var runtime: String?
        package var file: String?

        /// The version to print or label: the loaded library's own, else the headers'.
        package var version: String { runtime ?? built ?? "unknown" }
    }

    /// Opens libav and libheif (nothing else is lazy), so `current` can report them. Returns what could not
    /// be loaded, by library.
    @discardableResult
    package static func loadAll() -> [String: String] {
        var missing: [String: String] = [:]
        if let why = fb_av_load() { missing["libav"] = String(cString: why) }
        if let why = flipbook_heif_load() { missing["libheif"] = String(cString: why) }
        return missing
    }

    /// libavcodec, libx264, libjpeg-turbo, giflib, libwebp, libheif and lcms2, in that order. A lazily loaded
    /// library not loaded yet reports no runtime version (nothing is loaded here).
    package static func current() -> [Entry] {
        let avcodecSoname = "libavcodec.so.\(LIBAVCODEC_VERSION_MAJOR)"
        var avcodec = Entry(name: "libavcodec", built: "\(LIBAVCODEC_VERSION_MAJOR).\(LIBAVCODEC_VERSION_MINOR).\(LIBAVCODEC_VERSION_MICRO)")
        if let version: UInt32 = call(avcodecSoname, "avcodec_version") {
            avcodec.runtime = "\(version >> 16).\((version >> 8) & 0xff).\(version & 0xff)"
        }
        // x264 has no version call; its build number is its soname's (libx264.so.164), which libavcodec loaded.
        var x264 = Entry(name: "libx264")
        if let file = loadedFile(containing: "libx264.so.") {
            x264.file = file
            x264.runtime = file.split(separator: "/").last.map { String($0.dropFirst("libx264.so.".count)) }
        }
        var jpeg = Entry(name: "libjpeg-turbo", built: Self.dotted(Int(LIBJPEG_TURBO_VERSION_NUMBER), 1000))
        jpeg.file = loadedFile(containing: "libjpeg.so.")
        var gif = Entry(name: "giflib", built: "\(GIFLIB_MAJOR).\(GIFLIB_MINOR).\(GIFLIB_RELEASE)")
        gif.file = loadedFile(containing: "libgif.so.")
        let webpVersion = Int(WebPGetDecoderVersion())
        let webp = Entry(name: "libwebp", runtime: "\(webpVersion >> 16).\((webpVersion >> 8) & 0xff).\(webpVersion & 0xff)")
        var heif = Entry(name: "libheif")
        if let version: UnsafePointer<CChar> = call("libheif.so.1", "heif_get_version") { heif.runtime = String(cString: version) }
        let lcmsVersion = Int(cmsGetEncodedCMMversion())
        let lcms = Entry(name: "lcms2", runtime: "\(lcmsVersion / 1000).\((lcmsVersion / 10) % 100)")
        return [avcodec, x264, jpeg, gif, webp, heif, lcms]
    }

    /// 2001005 -> "2.1.5" (major * step^2 + minor * step + patch).
    static func dotted(_ number: Int, _ step: Int) -> String {
        "\(number / (step * step)).\((number / step) % step).\(number % step)"
    }

    /// Calls the no-argument function `symbol` of the already loaded `library` (RTLD_NOLOAD: never loads it).
    private static func call<T>(_ library: String, _ symbol: String) -> T? {
        guard let handle = dlopen(library, RTLD_LAZY | RTLD_NOLOAD) else { return nil }
        defer { dlclose(handle) }
        guard let address = dlsym(handle, symbol) else { return nil }
        typealias Function = @convention(c) () -> UnsafeRawPointer?
        if T.self == UInt32.self {
            let function = unsafeBitCast(address, to: (@convention(c) () -> UInt32).self)
            return function() as? T
        }
        let function = unsafeBitCast(address, to: Function.self)
        return function().map { $0.assumingMemoryBound(to: CChar.self) } as? T
    }

    /// The real path of the loaded shared object whose path contains `fragment`, if one is mapped (read
    /// from /proc/self/maps: glibc's dl_iterate_phdr is not in Swift's Glibc module).
    private static func loadedFile(containing fragment: String) -> String? {
        guard let maps = try? FileByteSource(path: "/proc/self/maps") else { return nil }
        // procfs reports size 0: read until a read returns nothing.
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let fd = maps.descriptor.fd
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            guard let slash = line.firstIndex(of: "/") else { continue }
            let path = String(line[slash...])
            if path.contains(fragment) { return realPath(path) ?? path }
        }
        return nil
    }
}
