"""One Python client (requests.Session, keep-alive) making COUNT GETs of
URL with the header NAME: "Bearer " + $VARIABLE; prints the total seconds
and the per-request latencies' p50 and p99 in milliseconds, as JSON.
Through `odr exec --proxy` the variable holds a placeholder and the
session goes through the proxy; directly it holds the value.

    python3 keepalive.py URL VARIABLE COUNT
"""
import json
import os
import sys
import time

import requests

url, variable, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
session = requests.Session()
headers = {"Authorization": "Bearer " + os.environ[variable]}
session.get(url, headers=headers).raise_for_status()  # the connection made before timing
latencies = []
start = time.perf_counter()
for _ in range(count):
    before = time.perf_counter()
    session.get(url, headers=headers).raise_for_status()
    latencies.append((time.perf_counter() - before) * 1000)
total = time.perf_counter() - start
latencies.sort()
print(json.dumps({"total": total, "p50": latencies[len(latencies) // 2], "p99": latencies[int(len(latencies) * 0.99)]}))
