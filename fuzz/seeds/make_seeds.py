#!/usr/bin/env python3
"""Writes the small hand-made seed corpus of every fuzz target into fuzz/seeds/<target>/.

Inputs follow each target's layout (see the doc comment of fuzz_targets/<target>.rs): most start
with a mode byte. `CHALLENGE` and `KID` are placeholders the targets replace at run time.
Run from anywhere: python3 fuzz/seeds/make_seeds.py
"""

import base64
import hashlib
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
RP_ID = "localhost"
ORIGIN = "http://localhost:8080"
BASE_URL = "http://localhost:8080/acme"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def write(target: str, name: str, data: bytes) -> None:
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# --- CBOR (the subset attestation objects use) ---------------------------------------------------
def head(major: int, n: int) -> bytes:
    m = major << 5
    if n < 24:
        return bytes([m | n])
    if n < 0x100:
        return bytes([m | 24, n])
    if n < 0x10000:
        return bytes([m | 25]) + struct.pack(">H", n)
    return bytes([m | 26]) + struct.pack(">I", n)


def cbor(v) -> bytes:
    if isinstance(v, bool):
        return bytes([0xF5 if v else 0xF4])
    if isinstance(v, int):
        return head(0, v) if v >= 0 else head(1, -1 - v)
    if isinstance(v, bytes):
        return head(2, len(v)) + v
    if isinstance(v, str):
        b = v.encode()
        return head(3, len(b)) + b
    if isinstance(v, list):
        return head(4, len(v)) + b"".join(cbor(x) for x in v)
    if isinstance(v, dict):
        return head(5, len(v)) + b"".join(cbor(k) + cbor(x) for k, x in v.items())
    raise TypeError(v)


# The P-256 generator point: a valid public key nobody needs the private half of.
GX = bytes.fromhex("6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296")
GY = bytes.fromhex("4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5")
COSE_ES256 = cbor({1: 2, 3: -7, -1: 1, -2: GX, -3: GY})
CRED_ID = bytes([0x42] * 16)
RP_HASH = hashlib.sha256(RP_ID.encode()).digest()
YUBIKEY_AAGUID = bytes.fromhex("cb69481e8ff7403993ec0a2729a154a8")


def reg_auth_data(flags=0x45, counter=0, aaguid=bytes(16), ext=None) -> bytes:
    d = RP_HASH + bytes([flags]) + struct.pack(">I", counter) + aaguid
    d += struct.pack(">H", len(CRED_ID)) + CRED_ID + COSE_ES256
    if ext is not None:
        d += cbor(ext)
    return d


def att_object(fmt="none", stmt=None, auth=None) -> bytes:
    return cbor({"fmt": fmt, "attStmt": stmt or {}, "authData": auth or reg_auth_data()})


def client_data(kind: str) -> bytes:
    return json.dumps(
        {"type": kind, "challenge": "CHALLENGE", "origin": ORIGIN, "crossOrigin": False}, separators=(",", ":")
    ).encode()


def registration(obj: bytes) -> bytes:
    return json.dumps(
        {
            "id": b64(CRED_ID),
            "rawId": b64(CRED_ID),
            "type": "public-key",
            "authenticatorAttachment": "platform",
            "response": {
                "clientDataJSON": b64(client_data("webauthn.create")),
                "attestationObject": b64(obj),
                "transports": ["internal"],
            },
            "clientExtensionResults": {},
        }
    ).encode()


def assertion(auth: bytes, user_handle: bool) -> bytes:
    response = {
        "clientDataJSON": b64(client_data("webauthn.get")),
        "authenticatorData": b64(auth),
        "signature": b64(bytes.fromhex("3045022100") + bytes(32) + bytes.fromhex("0220") + bytes(32)),
    }
    if user_handle:
        response["userHandle"] = b64(bytes([7] * 16))
    return json.dumps(
        {"id": b64(CRED_ID), "rawId": b64(CRED_ID), "type": "public-key", "response": response, "clientExtensionResults": {}}
    ).encode()


def webauthn() -> None:
    t = "webauthn"
    packed = att_object("packed", {"alg": -7, "sig": bytes(70)}, reg_auth_data(0x5D, 0, YUBIKEY_AAGUID))
    with_ext = reg_auth_data(0xC5, 3, ext={"credProtect": 2, "hmac-secret": True})
    write(t, "register-json-none", b"\x00" + registration(att_object()))
    write(t, "register-json-packed", b"\x00" + registration(packed))
    write(t, "assertion-json", b"\x01" + assertion(RP_HASH + b"\x05" + struct.pack(">I", 1), True))
    write(t, "attestation-none", b"\x02" + att_object())
    write(t, "attestation-packed", b"\x02" + packed)
    write(t, "attestation-extensions", b"\x02" + att_object(auth=with_ext))
    write(t, "assertion-auth-data", b"\x03" + RP_HASH + b"\x05" + struct.pack(">I", 2))
    write(t, "assertion-auth-data-ext", b"\x03" + RP_HASH + b"\x85" + struct.pack(">I", 2) + cbor({"credProtect": 1}))
    write(t, "raw-auth-data", b"\x04" + reg_auth_data(0x5D, 9, YUBIKEY_AAGUID))
    write(t, "raw-attestation-object", b"\x05" + packed)


def client_data_seeds() -> None:
    t = "client_data"
    write(t, "create", b"\x00" + client_data("webauthn.create"))
    write(t, "get", b"\x01" + client_data("webauthn.get"))
    write(t, "get-discoverable", b"\x02" + client_data("webauthn.get"))
    extra = {
        "type": "webauthn.get",
        "challenge": "CHALLENGE",
        "origin": ORIGIN,
        "crossOrigin": True,
        "topOrigin": "https://other.example",
        "tokenBinding": {"status": "present", "id": "AAAA"},
        "other_keys_can_be_added_here": "do not compare clientDataJSON against a template",
    }
    write(t, "cross-origin", b"\x01" + json.dumps(extra).encode())
    write(t, "bare", b"\x03" + client_data("webauthn.create"))


def csv_seeds() -> None:
    t = "csv_import"
    write(
        t,
        "roles",
        b"\x00email,name,roles\nada@example.test,Ada Lovelace,staff;admin\n"
        b"grace@example.test,\"Hopper, Grace\",\nalan@example.test,Alan,billing\n",
    )
    write(t, "bom-two-columns", b"\x05\xef\xbb\xbfEmail,Name\r\nbob@example.test,Bob\r\nbad-address,Eve\r\n")
    write(
        t,
        "errors",
        b"\x02email,name,roles\nada@example.test,Ada,ghost\nADA@example.test,Again,\n\"=cmd\"@x.test,\"a\"\"b\"\nx@y.z\n",
    )


def multipart_seeds() -> None:
    t = "multipart"
    csv = b"email,name,roles\nada@example.test,Ada Lovelace,staff\ngrace@example.test,Grace Hopper,\n"
    body = (
        b"--XBOUNDARY\r\n"
        b'Content-Disposition: form-data; name="note"\r\n\r\n'
        b"spring intake\r\n"
        b"--XBOUNDARY\r\n"
        b'Content-Disposition: form-data; name="file"; filename="users.csv"\r\n'
        b"Content-Type: text/csv\r\n\r\n" + csv + b"\r\n--XBOUNDARY--\r\n"
    )
    write(t, "curl-upload", b"\x3f\xff" + body)
    write(t, "small-chunks-small-limit", b"\x02\x03" + body)
    two = (
        b"--XBOUNDARY\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\na\r\n"
        b"--XBOUNDARY\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nb\r\n--XBOUNDARY--\r\n"
    )
    write(t, "two-files", b"\x10\x10" + two)


def jwt_seeds() -> None:
    t = "jwt"

    def j(v) -> bytes:
        return json.dumps(v, separators=(",", ":")).encode()

    at = {"alg": "RS256", "typ": "at+jwt", "kid": "KID"}
    user = {
        "iss": BASE_URL,
        "sub": "u1",
        "aud": "client-1",
        "client_id": "client-1",
        "scope": "openid profile users:invite",
        "exp": 1_900_000_000,
        "iat": 1_799_999_000,
        "jti": "j1",
        "auth_time": 1_799_999_000,
        "roles": ["staff"],
    }
    client = {k: v for k, v in user.items() if k not in ("auth_time", "roles")}
    client["sub"] = "client-1"
    write(t, "signed-user-token", b"\x01" + j(at) + b"\x00" + j(user))
    write(t, "signed-client-token", b"\x01" + j(at) + b"\x00" + j(client))
    write(
        t,
        "signed-id-token",
        b"\x01" + j({"alg": "RS256", "typ": "JWT", "kid": "KID"}) + b"\x00" + j({"iss": BASE_URL, "sub": "u1", "aud": "c"}),
    )
    sig = b64(bytes(256))
    write(t, "bearer", b"\x00" + f"{b64(j(at))}.{b64(j(user))}.{sig}".encode())
    write(t, "alg-none", b"\x00" + f"{b64(j({'alg': 'none', 'typ': 'at+jwt'}))}.{b64(j(user))}.".encode())
    write(t, "hs256", b"\x00" + f"{b64(j({'alg': 'HS256', 'typ': 'at+jwt', 'kid': 'x'}))}.{b64(j(user))}.{b64(bytes(32))}".encode())


def admin_seeds() -> None:
    t = "admin_json"
    bodies = {
        "create-tenant": {"slug": "acme", "name": "Acme", "base_url": "https://login.acme.com", "rp_id": "acme.com", "registration": "open"},
        "create-app": {
            "name": "Portal",
            "type": "web",
            "redirect_uris": ["https://portal.acme.com/callback", "http://localhost:3000/cb"],
            "post_logout_redirect_uris": ["https://portal.acme.com/"],
            "cors_origins": ["https://portal.acme.com"],
            "scopes": ["users:invite"],
        },
        "create-role": {"name": "staff", "description": "Everyone on payroll"},
        "invite-user": {"email": "ada@example.test", "name": "Ada Lovelace", "roles": ["staff"]},
        "emails": {"emails": ["ada@example.test", "GRACE@example.test"]},
        "confirm": {"confirm": True},
        "apply": {
            "declared": {
                "tenant": [
                    {
                        "slug": "acme",
                        "base_url": "https://login.acme.com",
                        "role": [{"name": "staff"}],
                        "app": [{"name": "Api", "type": "m2m", "scopes": ["users:invite"]}],
                    }
                ]
            },
            "dry_run": True,
        },
        "register-start": {"username": "ada@example.test", "display_name": "Ada", "invite": "tok", "authenticator": "roaming", "attestation": "direct"},
        "auth-finish": {"assertion": {"id": "QkJC"}, "challenge": "abc"},
        "rename": {"name": "Work laptop"},
    }
    for name, body in bodies.items():
        write(t, name, json.dumps(body).encode())


if __name__ == "__main__":
    webauthn()
    client_data_seeds()
    csv_seeds()
    multipart_seeds()
    jwt_seeds()
    admin_seeds()
