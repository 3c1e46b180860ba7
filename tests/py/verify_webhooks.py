"""Verifies webhook deliveries with the Standard Webhooks reference library (PyPI
`standardwebhooks`), as a receiver would.

Reads JSON lines from standard input, one per delivery received:
    {"secret": "whsec_…", "headers": {"webhook-id": …, …}, "body": "…"}
and prints one JSON document: {"verified": N, "refused": [{"index": i, "error": "…"}], "types": [...]}.
A delivery is verified when its signature matches its id, timestamp and body under the secret
and its timestamp is within the library's tolerance (five minutes) of now.
"""

import json
import sys

from standardwebhooks.webhooks import Webhook


def main() -> None:
    verified = 0
    refused = []
    types = []
    for i, line in enumerate(sys.stdin):
        if not line.strip():
            continue
        d = json.loads(line)
        try:
            payload = Webhook(d["secret"]).verify(d["body"], d["headers"])
            verified += 1
            types.append(payload.get("type"))
        except Exception as e:  # noqa: BLE001 - every refusal is reported, whatever its class
            refused.append({"index": i, "error": f"{type(e).__name__}: {e}"})
    print(json.dumps({"verified": verified, "refused": refused, "types": types}))


if __name__ == "__main__":
    main()
