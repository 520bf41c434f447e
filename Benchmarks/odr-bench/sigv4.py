"""One Python client (requests.Session, keep-alive) making COUNT pairs of
SigV4-signed GETs of URL (botocore signs, service s3): one signed with the
credential in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, one with a
credential of no run. Through `odr exec --proxy` the first holds the run's
placeholders, so the proxy checks and re-signs it; the second goes through
unchanged. Prints each kind's per-request p50 in milliseconds, as JSON.

    python3 sigv4.py URL COUNT
"""
import json
import os
import sys
import time

import requests
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

url, count = sys.argv[1], int(sys.argv[2])
session = requests.Session()
kinds = {"resigned": Credentials(os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]),
         "passed": Credentials("AKIAOTHEROTHEROTHER0", "other/other/other/other/other/other/othe")}
latencies = {kind: [] for kind in kinds}
for i in range(count + 1):
    for kind, credentials in kinds.items():
        request = AWSRequest(method="GET", url=url)
        S3SigV4Auth(credentials, "s3", "us-east-1").add_auth(request)
        prepared = session.prepare_request(requests.Request("GET", url, headers=dict(request.headers.items())))
        before = time.perf_counter()
        session.send(prepared, verify=os.environ.get("REQUESTS_CA_BUNDLE", True),
                     proxies=requests.utils.get_environ_proxies(url)).raise_for_status()
        if i:  # the first pair makes the connection
            latencies[kind].append((time.perf_counter() - before) * 1000)
print(json.dumps({kind: sorted(values)[len(values) // 2] for kind, values in latencies.items()}))
