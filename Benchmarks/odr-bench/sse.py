"""Server-sent events, timed per event.

    python3 sse.py serve CERT KEY COUNT   https on 127.0.0.1 (port on stdout):
                                          GET / answers COUNT events, one every
                                          10 ms, each holding its send time (ns)
    python3 sse.py client URL             reads them (requests, streamed) and
                                          prints the p50 of arrival - send, ms

Through `odr exec --proxy` the answer goes through the proxy (the host is
bound, so it is intercepted and masked); directly it does not. Both ends
read the same clock.
"""
import http.server
import json
import ssl
import sys
import time

if sys.argv[1] == "serve":
    cert, key, count = sys.argv[2], sys.argv[3], int(sys.argv[4])

    class Events(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # chunked, as event streams are sent

        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for _ in range(count):
                event = b"data: %d\n\n" % time.time_ns()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
                time.sleep(0.01)
            self.wfile.write(b"0\r\n\r\n")
            self.close_connection = True

        def log_message(self, *_):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Events)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    server.serve_forever()
else:
    import requests

    latencies = []
    pending = b""
    with requests.get(sys.argv[2], stream=True) as answer:
        answer.raise_for_status()
        for chunk in answer.iter_content(chunk_size=None):
            arrived = time.time_ns()
            pending += chunk
            while b"\n\n" in pending:
                event, pending = pending.split(b"\n\n", 1)
                latencies.append((arrived - int(event.split(b": ", 1)[1])) / 1e6)
    latencies.sort()
    print(json.dumps({"p50": latencies[len(latencies) // 2], "events": len(latencies)}))
