import Foundation
import FlipbookServer
import Testing

/// Derivatives held as their open disk-cache object go out with `sendfile` (`CachedMediaHandler`). The
/// descriptor pins the inode it opened: a response in flight when the cache deletes the object (a trim) or
/// when another file is renamed over its name sends the bytes it started with, never a mix.
@Suite(.serialized) struct SendfileTests {
    @Test func aResponseInFlightKeepsItsBytesWhenTheObjectIsDeletedOrReplaced() async throws {
        let root = try Env.makeRoot("sendfile-swap")
        let cache = try Env.temporaryFolder("sendfile-swap-cache")
        // Noise keeps x264 from compressing it small: an MP4 of well over a megabyte, far more than the
        // socket buffers hold while the client below reads nothing.
        let made = try await Env.run("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i",
                                                         "testsrc2=size=480x270:rate=10:duration=4,noise=alls=40:allf=t",
                                                         "-vf", "split[a][b];[a]palettegen[p];[b][p]paletteuse", "-y", root + "/noise.gif"])
        try #require(made.status == 0, "\(made.stderr)")
        let server = try await TestServer(root: root) {
            $0.service.diskCacheDirectory = cache
            $0.service.sendfileMinimumBytes = 0
        }
        defer { Task { await server.stop() } }
        let first = try await server.request("/mp4/noise.gif")
        try #require(first.status == 200 && first.body.count > 1_000_000, "MP4 of \(first.body.count) bytes")
        let expected = try Env.temporaryFolder("sendfile-swap-expected") + "/expected.mp4"
        try Data(first.body).write(to: URL(fileURLWithPath: expected))

        // A client with a 4 KB receive window reads the head and 16 KB, then deletes every object in the
        // cache and writes other bytes under the MP4's object name (as a trim and a rename from another
        // process would), then reads the rest.
        let script = """
        import os, socket, sys
        cache, expected, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /mp4/noise.gif HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
        buf = b""
        while b"\\r\\n\\r\\n" not in buf or len(buf) < buf.index(b"\\r\\n\\r\\n") + 4 + 16384:
            buf += s.recv(4096)
        head, body = buf.split(b"\\r\\n\\r\\n", 1)
        length = int([l.split(b":")[1] for l in head.split(b"\\r\\n") if l.lower().startswith(b"content-length")][0])
        names = []
        for folder, _, files in os.walk(os.path.join(cache, "objects")):
            for name in files:
                path = os.path.join(folder, name)
                names.append(path)
                os.unlink(path)
        for path in names:
            with open(path + ".new", "wb") as f:
                f.write(b"\\xff" * length)
            os.rename(path + ".new", path)
        received_when_swapped = len(body)
        while len(body) < length:
            chunk = s.recv(65536)
            if not chunk: sys.exit("closed after %d of %d bytes" % (len(body), length))
            body += chunk
        same = body == open(expected, "rb").read()
        print(len(names), received_when_swapped, length, "same" if same else "mixed")
        """
        let before = server.server.answeredWithSendfile
        let out = try await Env.run(Env.python, ["-c", script, cache, expected, String(server.port)])
        try #require(out.status == 0, "\(out.stderr)")
        let fields = out.text.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        try #require(fields.count == 4, "\(out.text)")
        #expect(server.server.answeredWithSendfile == before + 1, "the response went out with sendfile")
        #expect(Int(fields[0])! >= 1, "objects deleted and replaced: \(fields[0])")
        #expect(Int(fields[1])! < Int(fields[2])! / 4, "swapped after \(fields[1]) of \(fields[2]) bytes")
        #expect(fields[3] == "same", "the body mixed bytes of two files")
        // The entry still holds the first object open: later hits send the same bytes, not the replacement.
        let again = try await server.request("/mp4/noise.gif", headers: [("Range", "bytes=0-99999")])
        #expect(again.status == 206 && again.body == Array(first.body[0..<100_000]))
    }

    /// A connection keeps one `NIOFileHandle` for the object it last sent and hands it back once it moves on
    /// to another (`CachedMediaHandler.writeToSocket`). One keep-alive connection alternates between two
    /// cached objects, whole and in ranges, one request at a time and then pipelined: every body is its own
    /// object's bytes. (A handle released while still open would stop this debug build at NIO's assertion.)
    @Test func aConnectionMovingBetweenObjectsSendsEachOnesBytes() async throws {
        let root = try Env.makeRoot("sendfile-alternate")
        let cache = try Env.temporaryFolder("sendfile-alternate-cache")
        let server = try await TestServer(root: root) {
            $0.service.diskCacheDirectory = cache
            $0.service.sendfileMinimumBytes = 0
        }
        defer { Task { await server.stop() } }
        let targets = ["/thumb/mandelbrot-1600x1200.jpg?size=400", "/thumb/mandelbrot-1600x1200.jpg?size=300"]
        let folder = try Env.temporaryFolder("sendfile-alternate-expected")
        for (index, target) in targets.enumerated() {
            let reply = try await server.request(target)
            try #require(reply.status == 200 && reply.body.count > 4096, "\(target): \(reply.status), \(reply.body.count) bytes")
            try Data(reply.body).write(to: URL(fileURLWithPath: "\(folder)/\(index)"))
        }
        let script = """
        import socket, sys
        folder, port, a, b = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
        expected = [open(folder + "/0", "rb").read(), open(folder + "/1", "rb").read()]
        targets = [a, b]
        s = socket.create_connection(("127.0.0.1", port))
        buf = b""
        def response():
            global buf
            while b"\\r\\n\\r\\n" not in buf:
                chunk = s.recv(65536)
                if not chunk: sys.exit("closed")
                buf += chunk
            head, buf = buf.split(b"\\r\\n\\r\\n", 1)
            lines = head.split(b"\\r\\n")
            length = int([l.split(b":")[1] for l in lines if l.lower().startswith(b"content-length")][0])
            while len(buf) < length:
                chunk = s.recv(65536)
                if not chunk: sys.exit("closed mid-body")
                buf += chunk
            body, buf = buf[:length], buf[length:]
            return int(lines[0].split(b" ")[1]), body
        def request(i):
            which = i % 2
            ranged = i % 3 == 1
            extra = "Range: bytes=100-2099\\r\\n" if ranged else ""
            return which, ranged, ("GET %s HTTP/1.1\\r\\nHost: x\\r\\n%s\\r\\n" % (targets[which], extra)).encode()
        def check(i, which, ranged, status, body):
            want = expected[which][100:2100] if ranged else expected[which]
            if status != (206 if ranged else 200) or body != want:
                sys.exit("request %d (%s, ranged %s): status %d, %d bytes, %s" % (i, targets[which], ranged, status, len(body), "same" if body == want else "different bytes"))
        for i in range(12):
            which, ranged, data = request(i)
            s.sendall(data)
            check(i, which, ranged, *response())
        pipelined = [request(i) for i in range(12, 24)]
        s.sendall(b"".join(data for _, _, data in pipelined))
        for i, (which, ranged, _) in enumerate(pipelined):
            check(12 + i, which, ranged, *response())
        s.close()
        print("ok")
        """
        let before = server.server.answeredWithSendfile
        let out = try await Env.run(Env.python, ["-c", script, folder, String(server.port), targets[0], targets[1]])
        #expect(out.status == 0 && out.text.hasPrefix("ok"), "\(out.text) \(out.stderr)")
        // The twelve requests sent one at a time were all hits answered with sendfile.
        #expect(server.server.answeredWithSendfile >= before + 12)
        // The server goes on answering from both objects on new connections.
        for (index, target) in targets.enumerated() {
            let again = try await server.request(target)
            let expected = try Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(index)"))
            #expect(again.status == 200 && Data(again.body) == expected)
        }
    }
}
