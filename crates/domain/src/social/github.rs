//! GitHub (OAuth 2.0 and its REST API, not OpenID Connect): the code flow with PKCE, then the
//! numeric user id, the primary **and verified** e-mail, and organisation membership.

use serde::Deserialize;

use super::client::Upstream;
use super::oidc::{Refused, refused};

/// The URL that sends the browser to GitHub.
pub fn authorize_url(
    github_url: &str,
    client_id: &str,
    redirect_uri: &str,
    state: &str,
    challenge: &str,
    wants_orgs: bool,
) -> String {
    let scope = if wants_orgs { "read:user user:email read:org" } else { "read:user user:email" };
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("scope", scope)
        .append_pair("state", state)
        .append_pair("code_challenge", challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("allow_signup", "false")
        .finish();
    format!("{github_url}/login/oauth/authorize?{query}")
}

/// Who signed in at GitHub.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GithubUser {
    /// The numeric id, as text: stable even when the login name changes.
    pub id: String,
    pub login: String,
    pub name: Option<String>,
    /// The primary address, only when GitHub has verified it.
    pub verified_email: Option<String>,
    /// The organisations of `wanted` in which the membership is `active`.
    pub active_orgs: Vec<String>,
}

/// GitHub's `/user` (the fields read).
#[derive(Deserialize)]
pub struct User {
    id: u64,
    login: String,
    #[serde(default)]
    name: Option<String>,
}

/// An entry of GitHub's `/user/emails`.
#[derive(Deserialize)]
pub struct Email {
    email: String,
    #[serde(default)]
    primary: bool,
    #[serde(default)]
    verified: bool,
}

/// GitHub's `/user/memberships/orgs/{org}`.
#[derive(Deserialize)]
pub struct Membership {
    state: String,
}

impl Membership {
    pub fn is_active(&self) -> bool {
        self.state == "active"
    }
}

pub struct Exchange<'a> {
    pub github_url: &'a str,
    pub api_url: &'a str,
    pub client_id: &'a str,
    pub client_secret: &'a str,
    pub code: &'a str,
    pub verifier: &'a str,
    pub redirect_uri: &'a str,
    pub orgs: &'a [String],
}

pub async fn exchange(up: &Upstream, x: &Exchange<'_>) -> Result<GithubUser, Refused> {
    let url = format!("{}/login/oauth/access_token", x.github_url);
    let form = [
        ("client_id", x.client_id),
        ("client_secret", x.client_secret),
        ("code", x.code),
        ("redirect_uri", x.redirect_uri),
        ("code_verifier", x.verifier),
    ];
    let (status, answer) = up.post_form(&url, &form, None).await?;
    let token = access_token_of(status, &answer)?;
    let user: User = up.get_json(&format!("{}/user", x.api_url), Some(token)).await?;
    let emails: Vec<Email> = up.get_json(&format!("{}/user/emails", x.api_url), Some(token)).await?;
    let mut active_orgs = vec![];
    for org in x.orgs {
        let url = format!("{}/user/memberships/orgs/{}", x.api_url, url_segment(org));
        // 404 (not a member) and 403 (membership hidden) mean "not active" here.
        if let Ok(m) = up.get_json::<Membership>(&url, Some(token)).await
            && m.is_active()
        {
            active_orgs.push(org.clone());
        }
    }
    Ok(github_user(user, emails, active_orgs))
}

/// The access token of GitHub's answer to the code exchange (its HTTP status and JSON body).
pub fn access_token_of(status: u16, answer: &serde_json::Value) -> Result<&str, Refused> {
    // GitHub answers a refused code with 200 and an `error` field.
    if status != 200 || answer.get("error").is_some() {
        return Err(refused("token_refused", format!("HTTP {status}: {answer}")));
    }
    answer["access_token"].as_str().ok_or_else(|| refused("token_refused", "no access_token"))
}

/// Who signed in, from `/user`, `/user/emails` and the organisations found active.
pub fn github_user(user: User, emails: Vec<Email>, active_orgs: Vec<String>) -> GithubUser {
    let verified_email = emails.into_iter().find(|e| e.primary && e.verified).map(|e| e.email);
    GithubUser { id: user.id.to_string(), login: user.login, name: user.name, verified_email, active_orgs }
}

fn url_segment(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_access_token_of_an_answer() {
        assert_eq!(access_token_of(200, &json!({"access_token": "gho_x"})).unwrap(), "gho_x");
        // GitHub refuses a code with 200 and an error.
        assert!(access_token_of(200, &json!({"error": "bad_verification_code", "access_token": "x"})).is_err());
        assert!(access_token_of(401, &json!({"access_token": "x"})).is_err());
        assert!(access_token_of(200, &json!({})).is_err());
    }

    #[test]
    fn only_the_primary_and_verified_address_is_kept() {
        let user: User = serde_json::from_value(json!({"id": 42, "login": "ada"})).unwrap();
        let emails: Vec<Email> = serde_json::from_value(json!([
            {"email": "a@x.test", "primary": false, "verified": true},
            {"email": "b@x.test", "primary": true, "verified": true},
        ]))
        .unwrap();
        let who = github_user(user, emails, vec![]);
        assert_eq!((who.id.as_str(), who.verified_email.as_deref()), ("42", Some("b@x.test")));
        let user: User = serde_json::from_value(json!({"id": 42, "login": "ada"})).unwrap();
        let unverified: Vec<Email> = serde_json::from_value(json!([{"email": "b@x.test", "primary": true}])).unwrap();
        assert_eq!(github_user(user, unverified, vec![]).verified_email, None);
        let pending: Membership = serde_json::from_value(json!({"state": "pending"})).unwrap();
        assert!(!pending.is_active());
    }
}
