//! The HTTP client towards identity providers: reqwest over rustls, trusting the system's roots
//! (`store::trust`). It calls only the URLs of a
//! provider's configuration (or its discovery document), follows no redirect, gives up after a
//! few seconds, and reads at most [`MAX_RESPONSE`] bytes of an answer.

use std::time::Duration;

use serde::de::DeserializeOwned;

/// Largest answer read from a provider: discovery documents, key sets and token answers are a
/// few KiB; anything bigger is refused rather than buffered.
pub const MAX_RESPONSE: usize = 256 * 1024;

/// Why a call to a provider failed (for the log; the user sees a sentence).
#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    #[error("{url}: {message}")]
    Transport { url: String, message: String },
    #[error("{url}: HTTP {status}: {body}")]
    Status { url: String, status: u16, body: String },
    #[error("{url}: the answer is larger than {MAX_RESPONSE} bytes")]
    TooLarge { url: String },
    #[error("{url}: the answer is not the expected JSON: {message}")]
    Json { url: String, message: String },
    #[error("{url} is not an allowed provider URL: {message}")]
    Url { url: String, message: String },
}

#[derive(Debug, Clone)]
pub struct Upstream {
    http: reqwest::Client,
}

impl Upstream {
    pub fn new() -> Result<Upstream, String> {
        // The system's trust store, as for PostgreSQL and SMTP (`store::trust`).
        let roots = crate::store::trust::system_roots().iter().filter_map(|c| reqwest::Certificate::from_der(c).ok());
        let http = reqwest::Client::builder()
            .tls_certs_only(roots)
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(10))
            .user_agent(concat!("latchkey/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot build the HTTP client for identity providers: {e}"))?;
        Ok(Upstream { http })
    }

    /// `GET url` with an optional Bearer token; JSON answer.
    pub async fn get_json<T: DeserializeOwned>(&self, url: &str, bearer: Option<&str>) -> Result<T, UpstreamError> {
        checked(url)?;
        let mut req = self.http.get(url).header(reqwest::header::ACCEPT, "application/json");
        if let Some(token) = bearer {
            req = req.bearer_auth(token);
        }
        let (status, body) = self.send(url, req).await?;
        parse(url, status, &body)
    }

    /// `POST url` with a form body, optionally HTTP Basic client authentication; returns the
    /// status and the JSON answer (OAuth errors come as JSON with a 4xx, GitHub's even with 200).
    pub async fn post_form(
        &self,
        url: &str,
        form: &[(&str, &str)],
        basic: Option<(&str, &str)>,
    ) -> Result<(u16, serde_json::Value), UpstreamError> {
        checked(url)?;
        let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(form).finish();
        let mut req = self
            .http
            .post(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body);
        if let Some((user, password)) = basic {
            req = req.basic_auth(form_encode(user), Some(form_encode(password)));
        }
        let (status, body) = self.send(url, req).await?;
        let value = serde_json::from_slice(&body)
            .map_err(|e| UpstreamError::Json { url: url.to_owned(), message: e.to_string() })?;
        Ok((status, value))
    }

    /// `POST url` with a form body, for a notification whose answer is only its status (a
    /// back-channel logout): the status; the body is read (bounded) and dropped.
    pub async fn notify_form(&self, url: &str, form: &[(&str, &str)]) -> Result<u16, UpstreamError> {
        checked(url)?;
        let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(form).finish();
        let req =
            self.http.post(url).header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded").body(body);
        let (status, _) = self.send(url, req).await?;
        Ok(status)
    }

    /// `POST url` with a JSON body and headers of the caller's (a webhook delivery): the status;
    /// the answer is read (bounded) and dropped.
    pub async fn notify_json(&self, url: &str, headers: &[(&str, &str)], body: String) -> Result<u16, UpstreamError> {
        checked(url)?;
        let mut req = self.http.post(url).header(reqwest::header::CONTENT_TYPE, "application/json").body(body);
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        let (status, _) = self.send(url, req).await?;
        Ok(status)
    }

    async fn send(&self, url: &str, req: reqwest::RequestBuilder) -> Result<(u16, Vec<u8>), UpstreamError> {
        let transport = |e: reqwest::Error| {
            // reqwest's sentence names the request, not why it failed; the two common causes said.
            let why = if e.is_timeout() {
                "no answer within 10 s"
            } else if e.is_connect() {
                "cannot connect"
            } else {
                ""
            };
            let message = if why.is_empty() { e.to_string() } else { format!("{why} ({e})") };
            UpstreamError::Transport { url: url.to_owned(), message }
        };
        let mut response = req.send().await.map_err(transport)?;
        let status = response.status().as_u16();
        if response.content_length().is_some_and(|n| n > MAX_RESPONSE as u64) {
            return Err(UpstreamError::TooLarge { url: url.to_owned() });
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(transport)? {
            if body.len() + chunk.len() > MAX_RESPONSE {
                return Err(UpstreamError::TooLarge { url: url.to_owned() });
            }
            body.extend_from_slice(&chunk);
        }
        Ok((status, body))
    }
}

/// RFC 6749 §2.3.1: client id and secret are form-encoded before Basic encoding.
fn form_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

fn checked(url: &str) -> Result<(), UpstreamError> {
    super::callable_url(url).map(|_| ()).map_err(|message| UpstreamError::Url { url: url.to_owned(), message })
}

/// A provider's answer to `GET url`: a 2xx status and JSON of the expected shape.
pub fn parse<T: DeserializeOwned>(url: &str, status: u16, body: &[u8]) -> Result<T, UpstreamError> {
    if !(200..300).contains(&status) {
        let text = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
        return Err(UpstreamError::Status { url: url.to_owned(), status, body: text });
    }
    serde_json::from_slice(body).map_err(|e| UpstreamError::Json { url: url.to_owned(), message: e.to_string() })
}
