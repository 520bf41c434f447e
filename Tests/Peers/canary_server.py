#!/usr/bin/env python3
"""Listens where a sandboxed command must not reach, and answers every
connection with a canary: the places of AgentBoundaryTests' table.

    canary_server.py CANARY ABSTRACT_NAME PATH... 

Listens on the abstract unix socket ABSTRACT_NAME, on each unix socket
PATH, and on a TCP port of 127.0.0.1 it chooses; prints that port on one
line once all listen, and serves until its stdin closes.
"""
import os
import selectors
import socket
import sys

canary, abstract, paths = sys.argv[1].encode(), sys.argv[2], sys.argv[3:]
listeners = []
unix = socket.socket(socket.AF_UNIX)
unix.bind("\0" + abstract)
listeners.append(unix)
for path in paths:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    listeners.append(server)
tcp = socket.socket()
tcp.bind(("127.0.0.1", 0))
listeners.append(tcp)
selector = selectors.DefaultSelector()
for server in listeners:
    server.listen(16)
    selector.register(server, selectors.EVENT_READ)
selector.register(sys.stdin, selectors.EVENT_READ)
print(tcp.getsockname()[1], flush=True)
while True:
    for key, _ in selector.select():
        if key.fileobj is sys.stdin:
            if not sys.stdin.buffer.read1(4096):
                for path in paths:
                    os.unlink(path)
                sys.exit(0)
            continue
        connection, _ = key.fileobj.accept()
        connection.sendall(canary)
        connection.close()
