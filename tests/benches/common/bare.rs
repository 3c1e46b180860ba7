//! A bare token server: the least any token endpoint built on the daemon's stack (hyper 1 on a
//! tokio runtime with one worker per core, aws-lc-rs RSA-2048) does per request. It reads an
//! HTTP/1.1 POST, builds claims shaped like Latchkey's, signs them RS256 and answers JSON: no
//! client authentication, tenant, storage, audit, limits or metrics.
//!
//! The goals' ratios divide a rate by `openssl speed`'s signatures per second, which no HTTP
//! server reaches: each request also costs its parsing, its loopback TCP and its share of the
//! load generator on the same cores. Measured beside Latchkey in the same rounds, this server
//! shows how much of the ceiling is reachable at all on this machine, and Latchkey ÷ bare is what
//! Latchkey's own work costs.
//!
//! Any path: a form with `grant_type=authorization_code` gets an access token, an ID token and a
//! refresh token (two signatures, as a code exchange); any other form one signed access token (a
//! client-credentials grant). Nothing in the form is checked.
#![allow(dead_code)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::rand::{SystemRandom, fill};
use aws_lc_rs::rsa::KeySize;
use aws_lc_rs::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::json;

const ISSUER: &str = "http://127.0.0.1/bench";
const CLIENT: &str = "lk_3f9a1c2e7b8d4a6f9e0c1b2a";

/// A running bare server; it stops when dropped.
pub struct Bare {
    pub addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Bare {
    /// Starts the server on an ephemeral loopback port with one worker thread per core.
    pub fn start() -> Bare {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime");
        let key = Arc::new(RsaKeyPair::generate(KeySize::Rsa2048).expect("an RSA-2048 key"));
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        runtime.spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                let key = key.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| answer(key.clone(), req));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Bare { addr, runtime: Some(runtime) }
    }

    /// `http://addr`
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Bare {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

async fn answer(
    key: Arc<RsaKeyPair>,
    req: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    // The form is read whole, as a token endpoint must; only its grant type is looked at.
    let form = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let code = form.split(|&b| b == b'&').any(|p| p == b"grant_type=authorization_code");
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let access = json!({
        "iss": ISSUER, "sub": if code { "usr_0190f3c2a1b27c4d8e9f" } else { CLIENT }, "aud": CLIENT,
        "client_id": CLIENT, "scope": if code { "openid email profile" } else { "" },
        "exp": now + 900, "iat": now, "jti": random(16),
    });
    let mut body = json!({
        "access_token": sign(&key, "at+jwt", &access),
        "token_type": "Bearer",
        "expires_in": 900,
        "scope": access["scope"],
    });
    if code {
        let id = json!({
            "iss": ISSUER, "sub": "usr_0190f3c2a1b27c4d8e9f", "aud": CLIENT, "exp": now + 900, "iat": now,
            "auth_time": now, "nonce": "n-0S6_WzA2Mj", "amr": ["hwk", "user"],
            "email": "ada@bench.test", "email_verified": true, "name": "Ada",
        });
        body["id_token"] = json!(sign(&key, "JWT", &id));
        body["refresh_token"] = json!(random(38));
    }
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    Ok(Response::builder()
        .header("content-type", "application/json")
        .header("cache-control", "no-store")
        .body(Full::new(Bytes::from(bytes)))
        .unwrap_or_default())
}

/// `header.claims.signature`, RS256.
fn sign(key: &RsaKeyPair, typ: &str, claims: &serde_json::Value) -> String {
    let header = json!({"alg": "RS256", "typ": typ, "kid": "bench-0123456789abcdef"});
    let mut jwt = B64.encode(header.to_string());
    jwt.push('.');
    jwt.push_str(&B64.encode(claims.to_string()));
    let mut signature = vec![0; key.public_modulus_len()];
    key.sign(&RSA_PKCS1_SHA256, &SystemRandom::new(), jwt.as_bytes(), &mut signature).expect("an RS256 signature");
    jwt.push('.');
    jwt.push_str(&B64.encode(&signature));
    jwt
}

/// `n` random bytes, base64url.
fn random(n: usize) -> String {
    let mut b = vec![0; n];
    fill(&mut b).expect("random bytes");
    B64.encode(&b)
}
