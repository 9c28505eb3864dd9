#!/usr/bin/env python3
"""A loopback HTTP proxy in front of moto that breaks things on purpose (a test harness part).

    fault_proxy.py PORTFILE UPSTREAM_PORT CONTROLFILE LOGFILE

Writes its port to PORTFILE. For each request it reads CONTROLFILE (JSON, optional) and then:
  {"down": true}          stops listening (connections are refused) until "down" is false again
  {"slowdown": 0.3}       answers that share of requests 503 SlowDown (S3's XML error)
  {"reset": 0.2}          closes that share of connections with a reset, no answer
                          (shares are exact, not drawn at random: 0.2 is every fifth request, so a run that
                          asks for faults always meets them; a 10% chance drawn per request left a run of 40
                          requests with no reset once in 70)
  {"replace": {"key": K, "file": F}}
                          after relaying the first GET of a key ending in K, PUTs F there (the object is
                          replaced while its reader is in the middle of it)
otherwise forwards the request to 127.0.0.1:UPSTREAM_PORT and relays the answer, one request per connection.
Appends "METHOD PATH STATUS BYTES" to LOGFILE for every request.
"""
import json, os, socket, struct, sys, threading, time, urllib.parse

port_file, upstream, control_file, log_file = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
lock = threading.Lock()
replaced = set()
owed = {}  # fault -> its share accumulated over the requests so far


def due(fault, share):
    """Whether this request gets `fault`: its share is added up request by request, and the fault falls each
    time the sum reaches a whole request."""
    if share <= 0:
        return False
    with lock:
        total = owed.get(fault, 0.0) + share
        hit = total >= 1.0 - 1e-9
        owed[fault] = total - 1.0 if hit else total
    return hit


def control():
    try:
        with open(control_file) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def log(line):
    with lock, open(log_file, "a") as f:
        f.write(line + "\n")


def read_request(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        got = conn.recv(65536)
        if not got:
            return None
        data += got
    head, body = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        got = conn.recv(65536)
        if not got:
            break
        body += got
    return head, body


def handle(conn):
    try:
        request = read_request(conn)
        if request is None:
            return
        head, body = request
        line = head.split(b"\r\n")[0].decode()
        method, path = line.split(" ")[0], line.split(" ")[1]
        c = control()
        if due("reset", c.get("reset", 0)):
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            log(f"{method} {path} RESET 0")
            return
        if due("slowdown", c.get("slowdown", 0)):
            xml = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
            conn.sendall(b"HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nConnection: close\r\nContent-Length: "
                         + str(len(xml)).encode() + b"\r\n\r\n" + xml)
            log(f"{method} {path} 503 0")
            return
        lines = [l for l in head.split(b"\r\n") if not l.lower().startswith(b"connection:")]
        up = socket.create_connection(("127.0.0.1", upstream))
        up.sendall(b"\r\n".join(lines) + b"\r\nConnection: close\r\n\r\n" + body)
        answer = b""
        while True:
            got = up.recv(1 << 20)
            if not got:
                break
            answer += got
        up.close()
        status = answer.split(b" ", 2)[1].decode() if answer else "EMPTY"
        r = c.get("replace")
        if r and method == "GET" and path.split("?")[0].endswith(r["key"]) and r["key"] not in replaced:
            # Replaced before this first answer is relayed: the reader's next request always meets the new object.
            replaced.add(r["key"])
            with open(r["file"], "rb") as f:
                data = f.read()
            import boto3  # only here: the other modes need no AWS client
            bucket, key = path.split("?")[0].lstrip("/").split("/", 1)
            boto3.client("s3", endpoint_url="http://127.0.0.1:%d" % upstream).put_object(Bucket=bucket, Key=urllib.parse.unquote(key), Body=data)
            log(f"REPLACED {path.split('?')[0]}")
        conn.sendall(answer)
        log(f"{method} {path} {status} {len(answer)}")
    except OSError:
        pass
    finally:
        conn.close()


def serve():
    port = 0
    while True:
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", port))
        server.listen(128)
        if port == 0:
            port = server.getsockname()[1]
            with open(port_file + ".tmp", "w") as f:
                f.write(str(port))
            os.rename(port_file + ".tmp", port_file)
        server.settimeout(0.1)
        while not control().get("down"):
            try:
                conn, _ = server.accept()
            except socket.timeout:
                continue
            threading.Thread(target=handle, args=(conn,), daemon=True).start()
        server.close()
        log("DOWN")
        while control().get("down"):
            time.sleep(0.05)
        log("UP")


serve()
