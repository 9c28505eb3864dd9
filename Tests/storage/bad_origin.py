#!/usr/bin/env python3
"""A deliberately misbehaving HTTP origin for the remote-source tests (a harness part, not a reference).

    bad_origin.py PORTFILE

Listens on a free loopback port (written to PORTFILE) and answers, per path:
  /lies        Content-Length 1000, then 10 MB of body on a closing connection
  /chunked     chunked, no length, 64 MB of zeros in 64 KB chunks
  /gzip-bomb   Content-Encoding: gzip, 1 GB of zeros compressed to about 1 MB
  /big-length  Content-Length 10 GB, then nothing
  /slow        200 with a length of 1000, then one byte a second
It ignores Range and If-* headers and serves each connection on a thread of its own.
"""
import gzip, io, os, socket, sys, threading, time

BOMB = None


def bomb():
    global BOMB
    if BOMB is None:
        buf = io.BytesIO()
        with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as f:
            chunk = b"\0" * (1 << 20)
            for _ in range(1024):
                f.write(chunk)
        BOMB = buf.getvalue()
    return BOMB


def handle(conn):
    try:
        data = b""
        while b"\r\n\r\n" not in data:
            got = conn.recv(65536)
            if not got:
                return
            data += got
        path = data.split(b" ")[1].decode()
        if path.startswith("/lies"):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n")
            for _ in range(160):
                conn.sendall(b"\0" * 65536)
        elif path.startswith("/chunked"):
            conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            for _ in range(1024):
                conn.sendall(b"10000\r\n" + b"\0" * 65536 + b"\r\n")
            conn.sendall(b"0\r\n\r\n")
        elif path.startswith("/gzip-bomb"):
            body = bomb()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Type: image/gif\r\nContent-Length: "
                         + str(len(body)).encode() + b"\r\n\r\n" + body)
        elif path.startswith("/big-length"):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10737418240\r\n\r\n")
            time.sleep(30)
        elif path.startswith("/slow"):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
            for _ in range(1000):
                conn.sendall(b"G")
                time.sleep(1)
        else:
            conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
    except OSError:
        pass
    finally:
        conn.close()


def main():
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    bomb()  # before the port is announced: no request waits for it
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(server.getsockname()[1]))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    while True:
        conn, _ = server.accept()
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
