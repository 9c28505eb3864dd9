"""An OTLP/HTTP trace receiver on loopback for the tests: POST /v1/traces bodies decoded with PyPI's
opentelemetry-proto (protobuf), not with Flipbook's code; spans kept as plain dicts."""
import gzip
import http.server
import threading

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2


class Receiver:
    def __init__(self, keep=True):
        """`keep` False: only count the spans (the bench), so that decoding them into dicts costs the shared cores
        less; `count` is kept either way."""
        self.spans = []
        self.count = 0
        self.requests = 0
        self.lock = threading.Condition()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                request = trace_service_pb2.ExportTraceServiceRequest()
                request.ParseFromString(body)
                count = sum(len(scope.spans) for resource in request.resource_spans for scope in resource.scope_spans)
                spans = receiver.decode(request) if receiver.keep else []
                with receiver.lock:
                    receiver.requests += 1
                    receiver.count += count
                    receiver.spans += spans
                    receiver.lock.notify_all()
                response = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(response)))
                self.end_headers()
                self.wfile.write(response)

            def log_message(self, *args):
                pass

        self.keep = keep
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @staticmethod
    def decode(request):
        """The spans of an ExportTraceServiceRequest as dicts."""
        spans = []
        for resource in request.resource_spans:
            service = next((a.value.string_value for a in resource.resource.attributes if a.key == "service.name"), None)
            for scope in resource.scope_spans:
                for span in scope.spans:
                    attributes = {}
                    for a in span.attributes:
                        v = a.value
                        attributes[a.key] = v.string_value if v.HasField("string_value") else v.int_value if v.HasField("int_value") else v.double_value if v.HasField("double_value") else v.bool_value
                    spans.append({"service": service, "name": span.name, "trace_id": span.trace_id.hex(),
                                  "span_id": span.span_id.hex(), "parent_id": span.parent_span_id.hex(),
                                  "start": span.start_time_unix_nano, "end": span.end_time_unix_nano,
                                  "attributes": attributes, "status": span.status.code})
        return spans

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}"

    def wait_for(self, predicate, ceiling=120):
        """Waits until `predicate(spans)` holds (or the ceiling passes); returns the spans."""
        with self.lock:
            self.lock.wait_for(lambda: predicate(self.spans), timeout=ceiling)
            return list(self.spans)

    def close(self):
        self.server.shutdown()
        self.server.server_close()
