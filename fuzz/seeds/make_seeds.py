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


def assertion_diff_seeds() -> None:
    """[select][signature mode][n] authenticatorData(n) clientDataJSON \0 extra (see the target)."""
    t = "assertion_diff"

    def auth(flags: int, counter: int, tail: bytes = b"") -> bytes:
        return RP_HASH + bytes([flags]) + struct.pack(">I", counter) + tail

    def seed(name: str, select: int, sig_mode: int, a: bytes, cd: bytes = None, extra: bytes = b"") -> None:
        cd = client_data("webauthn.get") if cd is None else cd
        write(t, name, bytes([select, sig_mode, len(a)]) + a + cd + b"\x00" + extra)

    def cd_with(**fields) -> bytes:
        c = {"type": "webauthn.get", "challenge": "CHALLENGE", "origin": ORIGIN, "crossOrigin": False}
        c.update(fields)
        return json.dumps(c, separators=(",", ":")).encode()

    seed("username-first", 0x00, 0, auth(0x05, 1))
    seed("username-less", 0x01, 0, auth(0x05, 2))
    seed("counters-both-zero", 0x00, 0, auth(0x05, 0))
    seed("counter-regression", 0x04, 0, auth(0x05, 5))
    seed("counter-max", 0x06, 0, auth(0x05, 0xFFFFFFFF))
    seed("backed-up", 0x08, 0, auth(0x1D, 3))
    seed("eligible-upgrade", 0x00, 0, auth(0x0D, 3))
    seed("eligible-upgrade-username-less", 0x01, 0, auth(0x0D, 3))
    seed("not-verified", 0x00, 0, auth(0x01, 3))
    seed("extensions", 0x00, 0, auth(0x85, 4, cbor({"credProtect": 1})))
    seed("extension-garbage", 0x00, 0, auth(0x85, 4, b"\xa1\x63"))
    seed("trailing-bytes", 0x00, 0, auth(0x05, 4, b"\x00\x00"))
    seed("attested-data", 0x00, 0, reg_auth_data(0x45, 4))
    seed("other-valid-signature", 0x00, 3, auth(0x05, 1))
    seed("signature-xor", 0x00, 2, auth(0x05, 1), extra=b"\x00" * 40 + b"\x01")
    seed("signature-non-minimal", 0x00, 5, auth(0x05, 1), extra=b"\x01")
    seed("signature-long-form", 0x00, 6, auth(0x05, 1))
    seed("signature-raw", 0x00, 7, auth(0x05, 1))
    seed("signature-s-plus-n", 0x00, 8, auth(0x05, 1))
    seed("signature-splice", 0x00, 9, auth(0x05, 1), extra=b"\x01\x46")
    seed("signature-given", 0x00, 1, auth(0x05, 1), extra=bytes.fromhex("3006020101020101"))
    seed("signature-trailing", 0x00, 4, auth(0x05, 1), extra=b"\x00")
    seed("origin-slash", 0x00, 0, auth(0x05, 1), cd_with(origin=ORIGIN + "/"))
    seed("origin-case", 0x00, 0, auth(0x05, 1), cd_with(origin=ORIGIN.replace("localhost", "LOCALHOST")))
    seed("cross-origin", 0x01, 0, auth(0x05, 1), cd_with(crossOrigin=True, topOrigin="https://evil.example"))
    seed("cross-origin-null", 0x00, 0, auth(0x05, 1), cd_with(crossOrigin=None))
    seed("token-binding", 0x00, 0, auth(0x05, 1), cd_with(tokenBinding={"status": "supported"}))
    seed("challenge-padded", 0x00, 0, auth(0x05, 1), cd_with(challenge="CHALLENGE="))
    seed("type-create", 0x00, 0, auth(0x05, 1), cd_with(type="webauthn.create"))
    seed("duplicate-key", 0x00, 0, auth(0x05, 1), client_data("webauthn.get")[:-1] + b',"type":"webauthn.get"}')


def social_seeds() -> None:
    """[mode][status or switches] input (see fuzz_targets/social.rs)."""
    t = "social"
    issuer = "https://idp.example.test"

    def j(v) -> bytes:
        return json.dumps(v, separators=(",", ":")).encode()

    discovery = {
        "issuer": issuer,
        "authorization_endpoint": issuer + "/authorize",
        "token_endpoint": issuer + "/token",
        "jwks_uri": issuer + "/jwks",
        "userinfo_endpoint": issuer + "/userinfo",
        "response_types_supported": ["code"],
        "id_token_signing_alg_values_supported": ["RS256", "ES256"],
    }
    write(t, "discovery", b"\x00\x00" + j(discovery))
    write(t, "discovery-slash", b"\x00\x40" + j(dict(discovery, issuer=issuer + "/")))
    write(t, "discovery-query", b"\x00\x00" + j(dict(discovery, authorization_endpoint=issuer + "/authorize?tenant=1")))
    write(t, "discovery-elsewhere", b"\x00\x00" + j(dict(discovery, token_endpoint="http://idp.example.test:8080/token")))
    write(t, "discovery-404", b"\x00\x88" + b"<html>not found</html>")
    n = bytes([0xC5]) + bytes(range(255)) * 1 + bytes([0x01])
    rsa = {"kty": "RSA", "use": "sig", "alg": "RS256", "kid": "r", "n": b64(n), "e": "AQAB"}
    ec = {"kty": "EC", "crv": "P-256", "alg": "ES256", "kid": "e", "x": b64(GX), "y": b64(GY)}
    write(t, "jwks", b"\x01\x00" + j({"keys": [rsa, ec]}))
    write(t, "jwks-odd", b"\x01\x00" + j({"keys": [{"kty": "oct", "k": "AAAA", "kid": "h"}, {"kty": "OKP", "crv": "Ed25519", "x": b64(bytes(32)), "kid": "o"}, dict(rsa, kid=None)]}))
    claims = {
        "iss": issuer,
        "sub": "248289761001",
        "aud": "latchkey-client",
        "exp": 1_800_000_600,
        "iat": 1_800_000_000,
        "nonce": "n-0S6_WzA2Mj",
        "email": "ada@example.test",
        "email_verified": True,
        "name": "Ada",
    }
    rs = {"alg": "RS256", "kid": "rsa1", "typ": "JWT"}
    es = {"alg": "ES256", "kid": "ec1"}
    write(t, "id-token-rs256", b"\x03\x00" + j(rs) + b"\x00" + j(claims))
    write(t, "id-token-es256", b"\x03\x01" + j(es) + b"\x00" + j(claims))
    write(t, "id-token-google", b"\x03\x02" + j(rs) + b"\x00" + j(dict(claims, iss="idp.example.test", hd="example.test", email_verified="true")))
    write(t, "id-token-slash", b"\x03\x04" + j(rs) + b"\x00" + j(dict(claims, iss=issuer + "/")))
    write(t, "id-token-audiences", b"\x03\x00" + j(rs) + b"\x00" + j(dict(claims, aud=["latchkey-client", "other"], azp="latchkey-client")))
    write(t, "id-token-expired", b"\x03\x00" + j(rs) + b"\x00" + j(dict(claims, exp=1_799_999_000)))
    write(t, "id-token-ps256", b"\x03\x00" + j(dict(rs, alg="PS256")) + b"\x00" + j(claims))
    write(t, "id-token-hs256", b"\x03\x00" + j(dict(rs, alg="HS256")) + b"\x00" + j(claims))
    unsigned = f"{b64(j(rs))}.{b64(j(claims))}.{b64(bytes(256))}"
    write(t, "token-answer", b"\x02\x00" + j({"access_token": "at", "token_type": "Bearer", "expires_in": 3600, "id_token": unsigned}))
    write(t, "token-answer-error", b"\x02\x85" + j({"error": "invalid_grant", "error_description": "bad code"}))
    write(t, "id-token-text", b"\x04\x00" + unsigned.encode())
    write(t, "id-token-none", b"\x04\x00" + f"{b64(j({'alg': 'none', 'kid': 'rsa1'}))}.{b64(j(claims))}.".encode())
    write(t, "github-token", b"\x05\x00" + j({"access_token": "gho_16C7e42F292c6912E7710c838347Ae178B4a", "scope": "read:user,user:email", "token_type": "bearer"}))
    write(t, "github-token-error", b"\x05\x00" + j({"error": "bad_verification_code", "error_description": "The code passed is incorrect or expired."}))
    user = {"login": "octocat", "id": 583231, "name": "The Octocat", "type": "User"}
    emails = [
        {"email": "octocat@users.noreply.github.com", "primary": False, "verified": True, "visibility": None},
        {"email": "octocat@github.com", "primary": True, "verified": True, "visibility": "public"},
    ]
    membership = {"state": "active", "role": "member", "organization": {"login": "acme"}}
    write(t, "github-user", b"\x06\x00" + j(user) + b"\x00" + j(emails) + b"\x00" + j(membership))
    write(t, "github-user-unverified", b"\x06\x00" + j(dict(user, name=None)) + b"\x00" + j([dict(emails[1], verified=False)]) + b"\x00" + j({"state": "pending"}))
    write(t, "callback", b"\x07\x00code=4%2F0AX4XfWh&state=s7a8te&scope=openid\x00latchkey_social=brw0; latchkey_session=x")
    write(t, "callback-error", b"\x07\x00error=access_denied&state=s&state=t\x00a=b\x00latchkey_social=\x00latchkey_social=brw1")


def device_seeds() -> None:
    """[mode] input (see fuzz_targets/device.rs)."""
    t = "device"
    grant = "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code"
    write(t, "typed-code", b"\x00bcdf-ghjk")
    write(t, "typed-code-spaces", b"\x00 BCDF\tghjk ")
    write(t, "typed-code-wrong", b"\x00ABCD-EFGH")
    write(t, "page-query", b"\x01user_code=BCDF-GHJK")
    write(t, "page-query-markup", b"\x01user_code=%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E&user_code=x")
    write(t, "lookup", b"\x02" + json.dumps({"user_code": "BCDF-GHJK"}).encode())
    write(t, "decide", b"\x03" + json.dumps({"user_code": "bcdfghjk", "approve": True}).encode())
    write(t, "decide-extra", b"\x03" + json.dumps({"user_code": "bcdfghjk", "approve": "yes", "x": 1}).encode())
    write(t, "poll-public", b"\x04\x00grant_type=" + grant.encode() + b"&device_code=Ag_EE5Xl2ldcnrfUkLqYOWxuHBlDtX&client_id=tv-app")
    basic = base64.b64encode(b"tv-app:s%3Acret").decode()
    write(t, "poll-basic", b"\x04Basic " + basic.encode() + b"\x00grant_type=" + grant.encode() + b"&device_code=abc")
    write(t, "poll-both", b"\x04basic " + basic.encode() + b"\x00grant_type=" + grant.encode() + b"&device_code=abc&client_secret=x")
    write(t, "authorization", b"\x05\x00client_id=tv-app&scope=openid+profile+email+credentials")
    write(t, "authorization-repeated", b"\x05\x00client_id=tv-app&scope=openid&scope=email")


if __name__ == "__main__":
    webauthn()
    client_data_seeds()
    csv_seeds()
    multipart_seeds()
    jwt_seeds()
    admin_seeds()
    assertion_diff_seeds()
    social_seeds()
    device_seeds()
