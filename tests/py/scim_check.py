"""Runs scim2-tester (PyPI) against a SCIM endpoint and prints one JSON summary.

Usage: python scim_check.py BASE_URL TOKEN
Prints {"total", "by_status": {...}, "problems": [{"title", "status", "reason"}...]}.
"""

import json
import sys

import httpx2
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_tester import Status, check_server

base_url, token = sys.argv[1], sys.argv[2]
http = httpx2.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
client = SyncSCIMClient(http)
results = check_server(client)
by_status: dict[str, int] = {}
problems = []
for r in results:
    by_status[r.status.name] = by_status.get(r.status.name, 0) + 1
    if r.status not in (Status.SUCCESS, Status.SKIPPED):
        problems.append({"title": r.title, "status": r.status.name, "reason": str(r.reason)[:600]})
print(json.dumps({"total": len(results), "by_status": by_status, "problems": problems}, indent=1))
