#if canImport(Glibc)
import Glibc
#endif

/// The real path of `path` (every symlink resolved, `.` and `..` gone), or nil if it does not exist: for the
/// gallery's root checks and the CLI's output-folder check.
package func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
}
