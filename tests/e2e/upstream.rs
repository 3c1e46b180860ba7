//! Stand-in identity providers on loopback, speaking the protocols Latchkey calls as a client:
//! an OpenID Connect provider (discovery, authorize, token, JWKS; Google's quirks optional) and
//! GitHub (authorize, access_token, /user, /user/emails, /user/memberships/orgs/{org}). Each has
//! knobs for the bad cases. Plain blocking HTTP/1.1, one thread per connection, `Connection:
//! close`: enough for a test, and no code shared with the daemon's own server.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use latchkey_domain::oidc::keys::{SigningKey, generate};
use serde_json::{Value, json};

struct Request {
    method: String,
    path: String,
    query: HashMap<String, String>,
    headers: HashMap<String, String>,
    form: HashMap<String, String>,
}

fn pairs(text: &str) -> HashMap<String, String> {
    url::form_urlencoded::parse(text.as_bytes()).into_owned().collect()
}

fn read_request(stream: &TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let target = parts.next()?.to_owned();
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
        }
    }
    let len: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    Some(Request {
        method,
        path: path.to_owned(),
        query: pairs(query),
        headers,
        form: pairs(&String::from_utf8_lossy(&body)),
    })
}

enum Reply {
    Json(u16, Value),
    Redirect(String),
    Text(u16, String),
}

fn write_reply(mut stream: TcpStream, reply: Reply) {
    let (status, extra, content_type, body) = match reply {
        Reply::Json(s, v) => (s, String::new(), "application/json", v.to_string()),
        Reply::Redirect(to) => (302, format!("Location: {to}\r\n"), "text/plain", String::new()),
        Reply::Text(s, t) => (s, String::new(), "text/plain", t),
    };
    let head = format!(
        "HTTP/1.1 {status} X\r\n{extra}Content-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
}

/// Binds a loopback port and answers each request with `handle` on its own thread.
fn serve(handle: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = Arc::new(handle);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let handle = handle.clone();
            std::thread::spawn(move || {
                if let Some(req) = read_request(&stream) {
                    write_reply(stream, handle(&req));
                }
            });
        }
    });
    port
}

fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, verifier.as_bytes()))
}

fn random() -> String {
    let mut b = [0u8; 16];
    aws_lc_rs::rand::fill(&mut b).unwrap();
    URL_SAFE_NO_PAD.encode(b)
}

/// Client authentication as both providers accept it: HTTP Basic or the form.
fn client_of(req: &Request) -> (String, String) {
    if let Some(b64) = req.headers.get("authorization").and_then(|v| v.strip_prefix("Basic ")) {
        let raw = base64::engine::general_purpose::STANDARD.decode(b64).unwrap_or_default();
        let text = String::from_utf8_lossy(&raw).into_owned();
        let (id, secret) = text.split_once(':').unwrap_or(("", ""));
        let dec = |s: &str| url::form_urlencoded::parse(format!("x={s}").as_bytes()).next().unwrap().1.into_owned();
        return (dec(id), dec(secret));
    }
    (req.form.get("client_id").cloned().unwrap_or_default(), req.form.get("client_secret").cloned().unwrap_or_default())
}

/// Who signs in at the stand-in provider.
#[derive(Debug, Clone)]
pub struct UpstreamUser {
    pub sub: String,
    pub email: String,
    pub email_verified: bool,
    pub name: String,
    pub hd: Option<String>,
}

/// What the OIDC stand-in does wrong on purpose.
#[derive(Debug, Clone, Default)]
pub struct OidcKnobs {
    pub wrong_aud: bool,
    pub wrong_nonce: bool,
    pub wrong_iss: bool,
    pub expired: bool,
    /// Signed by a key that is not in the JWKS.
    pub unknown_key: bool,
    /// The token endpoint answers 200 with an error.
    pub token_error: bool,
    /// Google sends `iss` without its scheme.
    pub iss_without_scheme: bool,
    /// The user declines at the provider.
    pub deny: bool,
    /// The issuer ends with a slash, in discovery and in `iss` (as Auth0's do).
    pub issuer_trailing_slash: bool,
    /// Discovery names these endpoints instead of the stand-in's own (a hostile document).
    pub token_endpoint: Option<String>,
    pub jwks_uri: Option<String>,
    /// Discovery names this issuer instead of its own.
    pub discovery_issuer: Option<String>,
    /// `aud` is an array: the client and another party.
    pub extra_audience: bool,
    /// No `azp` claim (by default the stand-in sends `azp` = the client id).
    pub no_azp: bool,
    /// This `azp` instead of the client id.
    pub azp: Option<String>,
}

struct Code {
    redirect_uri: String,
    challenge: String,
    nonce: String,
}

struct OidcInner {
    user: UpstreamUser,
    knobs: OidcKnobs,
    codes: HashMap<String, Code>,
    /// Published keys; the last one signs.
    keys: Vec<SigningKey>,
    stranger: SigningKey,
    log: Vec<String>,
}

pub struct OidcStandin {
    pub issuer: String,
    inner: Arc<Mutex<OidcInner>>,
}

fn key() -> SigningKey {
    let g = generate(2048).unwrap();
    SigningKey::from_pkcs8(&g.kid, 2048, &g.pkcs8).unwrap()
}

impl OidcStandin {
    pub fn start(client_id: &str, client_secret: &str) -> OidcStandin {
        let inner = Arc::new(Mutex::new(OidcInner {
            user: UpstreamUser {
                sub: "upstream-1".into(),
                email: "ada@acme.test".into(),
                email_verified: true,
                name: "Ada Lovelace".into(),
                hd: None,
            },
            knobs: OidcKnobs::default(),
            codes: HashMap::new(),
            keys: vec![key()],
            stranger: key(),
            log: vec![],
        }));
        let (cid, secret) = (client_id.to_owned(), client_secret.to_owned());
        let state = inner.clone();
        let issuer_slot: Arc<Mutex<String>> = Arc::new(Mutex::new(String::new()));
        let issuer_in = issuer_slot.clone();
        let port = serve(move |req| {
            let issuer = issuer_in.lock().unwrap().clone();
            let mut s = state.lock().unwrap();
            s.log.push(format!("{} {}", req.method, req.path));
            let named = if s.knobs.issuer_trailing_slash { format!("{issuer}/") } else { issuer.clone() };
            match (req.method.as_str(), req.path.as_str()) {
                ("GET", "/.well-known/openid-configuration") => Reply::Json(
                    200,
                    json!({
                        "issuer": s.knobs.discovery_issuer.clone().unwrap_or_else(|| named.clone()),
                        "authorization_endpoint": format!("{issuer}/authorize"),
                        "token_endpoint": s.knobs.token_endpoint.clone().unwrap_or_else(|| format!("{issuer}/token")),
                        "jwks_uri": s.knobs.jwks_uri.clone().unwrap_or_else(|| format!("{issuer}/jwks")),
                        "response_types_supported": ["code"],
                        "subject_types_supported": ["public"],
                        "id_token_signing_alg_values_supported": ["RS256"],
                        "code_challenge_methods_supported": ["S256"],
                    }),
                ),
                ("GET", "/jwks") => {
                    Reply::Json(200, json!({"keys": s.keys.iter().map(|k| &k.jwk).collect::<Vec<_>>()}))
                }
                ("GET", "/authorize") => {
                    let q = &req.query;
                    let ok = q.get("client_id") == Some(&cid)
                        && q.get("response_type").map(String::as_str) == Some("code")
                        && q.get("code_challenge_method").map(String::as_str) == Some("S256")
                        && q.contains_key("code_challenge")
                        && q.contains_key("nonce")
                        && q.contains_key("state");
                    if !ok {
                        return Reply::Text(400, "bad authorization request".into());
                    }
                    let redirect = q["redirect_uri"].clone();
                    if s.knobs.deny {
                        return Reply::Redirect(format!("{redirect}?error=access_denied&state={}", q["state"]));
                    }
                    let code = random();
                    let entry = Code {
                        redirect_uri: redirect.clone(),
                        challenge: q["code_challenge"].clone(),
                        nonce: q["nonce"].clone(),
                    };
                    s.codes.insert(code.clone(), entry);
                    let state_param: String = url::form_urlencoded::byte_serialize(q["state"].as_bytes()).collect();
                    Reply::Redirect(format!("{redirect}?code={code}&state={state_param}"))
                }
                ("POST", "/token") => {
                    if client_of(req) != (cid.clone(), secret.clone()) {
                        return Reply::Json(401, json!({"error": "invalid_client"}));
                    }
                    if s.knobs.token_error {
                        return Reply::Json(200, json!({"error": "invalid_grant", "error_description": "knob"}));
                    }
                    let Some(code) = req.form.get("code").and_then(|c| s.codes.remove(c)) else {
                        return Reply::Json(400, json!({"error": "invalid_grant"}));
                    };
                    let verifier = req.form.get("code_verifier").cloned().unwrap_or_default();
                    if req.form.get("redirect_uri") != Some(&code.redirect_uri) || s256(&verifier) != code.challenge {
                        return Reply::Json(400, json!({"error": "invalid_grant"}));
                    }
                    let now =
                        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
                    let k = &s.knobs;
                    let iss = if k.wrong_iss {
                        "https://evil.example".to_owned()
                    } else if k.iss_without_scheme {
                        issuer.trim_start_matches("http://").trim_start_matches("https://").to_owned()
                    } else {
                        named
                    };
                    let aud = if k.wrong_aud { "someone-else".to_owned() } else { cid.clone() };
                    let mut claims = json!({
                        "iss": iss,
                        "aud": if k.extra_audience { json!([aud, "another-party"]) } else { json!(aud) },
                        "azp": k.azp.clone().unwrap_or_else(|| cid.clone()),
                        "sub": s.user.sub,
                        "email": s.user.email,
                        "email_verified": s.user.email_verified,
                        "name": s.user.name,
                        "nonce": if k.wrong_nonce { "other-nonce".to_owned() } else { code.nonce },
                        "iat": now,
                        "exp": if k.expired { now - 3600 } else { now + 300 },
                    });
                    if let Some(hd) = &s.user.hd {
                        claims["hd"] = hd.clone().into();
                    }
                    if k.no_azp {
                        claims.as_object_mut().unwrap().remove("azp");
                    }
                    let signer = if k.unknown_key { &s.stranger } else { s.keys.last().unwrap() };
                    let id_token = latchkey_domain::oidc::jwt::sign(signer, "JWT", &claims).unwrap();
                    Reply::Json(
                        200,
                        json!({"access_token": random(), "token_type": "Bearer", "expires_in": 300, "id_token": id_token}),
                    )
                }
                _ => Reply::Text(404, "not found".into()),
            }
        });
        let issuer = format!("http://127.0.0.1:{port}");
        *issuer_slot.lock().unwrap() = issuer.clone();
        OidcStandin { issuer, inner }
    }

    pub fn set_user(&self, user: UpstreamUser) {
        self.inner.lock().unwrap().user = user;
    }

    pub fn set_knobs(&self, knobs: OidcKnobs) {
        self.inner.lock().unwrap().knobs = knobs;
    }

    /// A new key signs from now on; the old one stays published.
    pub fn rotate_key(&self) {
        let k = key();
        self.inner.lock().unwrap().keys.push(k);
    }

    /// Requests seen so far, as `METHOD /path`.
    pub fn log(&self) -> Vec<String> {
        self.inner.lock().unwrap().log.clone()
    }
}

/// A server that answers nothing useful and records every request: where a hostile discovery
/// document would have the daemon send a code and a client secret.
pub struct Recorder {
    pub url: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    pub fn start() -> Recorder {
        let log = Arc::new(Mutex::new(vec![]));
        let seen = log.clone();
        let port = serve(move |req| {
            seen.lock().unwrap().push(format!("{} {} {:?}", req.method, req.path, req.form));
            Reply::Json(200, json!({"keys": []}))
        });
        Recorder { url: format!("http://127.0.0.1:{port}"), log }
    }

    /// Requests received so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

/// One address of a GitHub account.
#[derive(Debug, Clone)]
pub struct GithubEmail {
    pub email: String,
    pub primary: bool,
    pub verified: bool,
}

#[derive(Debug, Clone, Default)]
pub struct GithubKnobs {
    /// `access_token` answers 200 with `{"error": …}`, as GitHub does for a bad code.
    pub token_error: bool,
    pub deny: bool,
}

struct GithubInner {
    id: u64,
    login: String,
    emails: Vec<GithubEmail>,
    /// Organisation → membership state (`active`, `pending`).
    orgs: HashMap<String, String>,
    knobs: GithubKnobs,
    codes: HashMap<String, (String, String)>,
    tokens: Vec<String>,
}

pub struct GithubStandin {
    pub web_url: String,
    pub api_url: String,
    inner: Arc<Mutex<GithubInner>>,
}

impl GithubStandin {
    pub fn start(client_id: &str, client_secret: &str) -> GithubStandin {
        let inner = Arc::new(Mutex::new(GithubInner {
            id: 583231,
            login: "octo-ada".into(),
            emails: vec![GithubEmail { email: "ada@acme.test".into(), primary: true, verified: true }],
            orgs: HashMap::new(),
            knobs: GithubKnobs::default(),
            codes: HashMap::new(),
            tokens: vec![],
        }));
        let (cid, secret) = (client_id.to_owned(), client_secret.to_owned());
        let state = inner.clone();
        let port = serve(move |req| {
            let mut s = state.lock().unwrap();
            let authorized = || {
                req.headers
                    .get("authorization")
                    .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("token ")))
                    .is_some_and(|t| s.tokens.iter().any(|k| k == t))
            };
            match (req.method.as_str(), req.path.as_str()) {
                ("GET", "/login/oauth/authorize") => {
                    let q = &req.query;
                    if q.get("client_id") != Some(&cid)
                        || q.get("code_challenge_method").map(String::as_str) != Some("S256")
                    {
                        return Reply::Text(400, "bad authorization request".into());
                    }
                    let redirect = q["redirect_uri"].clone();
                    let state_param: String = url::form_urlencoded::byte_serialize(q["state"].as_bytes()).collect();
                    if s.knobs.deny {
                        return Reply::Redirect(format!("{redirect}?error=access_denied&state={state_param}"));
                    }
                    let code = random();
                    s.codes.insert(code.clone(), (redirect.clone(), q["code_challenge"].clone()));
                    Reply::Redirect(format!("{redirect}?code={code}&state={state_param}"))
                }
                ("POST", "/login/oauth/access_token") => {
                    let bad = || Reply::Json(200, json!({"error": "bad_verification_code", "error_description": "The code passed is incorrect or expired."}));
                    if s.knobs.token_error || client_of(req) != (cid.clone(), secret.clone()) {
                        return bad();
                    }
                    let Some((redirect, challenge)) = req.form.get("code").and_then(|c| s.codes.remove(c)) else {
                        return bad();
                    };
                    let verifier = req.form.get("code_verifier").cloned().unwrap_or_default();
                    if req.form.get("redirect_uri") != Some(&redirect) || s256(&verifier) != challenge {
                        return bad();
                    }
                    let token = random();
                    s.tokens.push(token.clone());
                    Reply::Json(200, json!({"access_token": token, "token_type": "bearer", "scope": "read:user,user:email"}))
                }
                ("GET", "/api/user") if authorized() => {
                    Reply::Json(200, json!({"id": s.id, "login": s.login, "name": "Ada Lovelace", "email": null}))
                }
                ("GET", "/api/user/emails") if authorized() => Reply::Json(
                    200,
                    Value::Array(
                        s.emails
                            .iter()
                            .map(|e| json!({"email": e.email, "primary": e.primary, "verified": e.verified, "visibility": null}))
                            .collect(),
                    ),
                ),
                ("GET", path) if path.starts_with("/api/user/memberships/orgs/") && authorized() => {
                    let org = path.trim_start_matches("/api/user/memberships/orgs/");
                    match s.orgs.get(org) {
                        Some(state) => Reply::Json(200, json!({"state": state, "role": "member", "organization": {"login": org}})),
                        None => Reply::Json(404, json!({"message": "Not Found"})),
                    }
                }
                // The API root, which `latchkey social enable` reads to check the address.
                ("GET", "/api" | "/api/") => Reply::Json(200, json!({"current_user_url": format!("{}/user", "/api")})),
                (_, path) if path.starts_with("/api/") => Reply::Json(401, json!({"message": "Requires authentication"})),
                _ => Reply::Text(404, "not found".into()),
            }
        });
        GithubStandin {
            web_url: format!("http://127.0.0.1:{port}"),
            api_url: format!("http://127.0.0.1:{port}/api"),
            inner,
        }
    }

    pub fn set_emails(&self, emails: Vec<GithubEmail>) {
        self.inner.lock().unwrap().emails = emails;
    }

    pub fn set_id(&self, id: u64) {
        self.inner.lock().unwrap().id = id;
    }

    pub fn set_org(&self, org: &str, state: &str) {
        self.inner.lock().unwrap().orgs.insert(org.to_owned(), state.to_owned());
    }

    pub fn set_knobs(&self, knobs: GithubKnobs) {
        self.inner.lock().unwrap().knobs = knobs;
    }
}
