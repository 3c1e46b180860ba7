"""A confidential client that authenticates with private_key_jwt (RFC 7523), its client
assertion made by authlib (not our code), then POSTs a client-credentials grant with the
standard library.

Usage: pkjwt_grant.py TOKEN_ENDPOINT CLIENT_ID ALG PRIVATE_KEY_PEM_FILE KID [EXPIRES_IN]
(KID "-" for none; EXPIRES_IN seconds, 120 by default: authlib's own default, an hour, is more
than the 5 minutes the server accepts.)
Prints the token endpoint's status and JSON answer: {"status": 200, "body": {...}}.
"""

import json
import sys
import urllib.error
import urllib.parse
import urllib.request

from authlib.oauth2.rfc7523 import private_key_jwt_sign

token_endpoint, client_id, alg, key_file = sys.argv[1:5]
kid = sys.argv[5] if len(sys.argv) > 5 and sys.argv[5] != "-" else None
expires_in = int(sys.argv[6]) if len(sys.argv) > 6 else 120
with open(key_file, "rb") as f:
    key = f.read()
headers = {"kid": kid} if kid else None
assertion = private_key_jwt_sign(key, client_id, token_endpoint, alg=alg, header=headers, expires_in=expires_in)
if isinstance(assertion, bytes):
    assertion = assertion.decode()
form = urllib.parse.urlencode(
    {
        "grant_type": "client_credentials",
        "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        "client_assertion": assertion,
    }
).encode()
request = urllib.request.Request(token_endpoint, data=form, method="POST")
request.add_header("Content-Type", "application/x-www-form-urlencoded")
try:
    with urllib.request.urlopen(request) as r:
        status, body = r.status, r.read()
except urllib.error.HTTPError as e:
    status, body = e.code, e.read()
print(json.dumps({"status": status, "body": json.loads(body), "assertion": assertion}))
