//! `{base_url}/scim/v2/…` (RFC 7644): routes below it, the bearer token, bodies in
//! `application/scim+json` (or `application/json`), answers and errors in SCIM's shapes.

use hyper::header::{self, HeaderValue};
use hyper::{Method, Response, StatusCode};
use latchkey::codes;
use latchkey_domain::error::{Error, Kind};
use latchkey_domain::scim::{self, Answer, groups, schemas, users};
use serde_json::{Value, json};

use super::body::{Req, read_bounded};
use super::request::{bearer, header as header_text};
use super::response::full;
use super::{Body, Cx};

const CONTENT_TYPE: &str = "application/scim+json";

/// A SCIM error response (RFC 7644 §3.12).
fn error(e: &Error) -> Response<Body> {
    let mut status = super::errors::status(e.kind);
    if e.code == codes::PRECONDITION_FAILED {
        status = StatusCode::PRECONDITION_FAILED;
    }
    if e.kind == Kind::Internal {
        tracing::error!(code = e.code, cause = e.cause.as_deref().unwrap_or(""), "SCIM request failed");
    }
    let mut body = json!({
        "schemas": [scim::ERROR_SCHEMA],
        "status": status.as_u16().to_string(),
        "detail": e.message,
    });
    if let Some(t) = scim::scim_type(e.code) {
        body["scimType"] = json!(t);
    }
    let mut r = respond(status, Some(&body));
    if status == StatusCode::UNAUTHORIZED {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"scim\""));
    }
    r
}

fn respond(status: StatusCode, body: Option<&Value>) -> Response<Body> {
    let bytes = body.map(|b| serde_json::to_vec(b).unwrap_or_default()).unwrap_or_default();
    let mut r = Response::new(full(bytes));
    *r.status_mut() = status;
    if body.is_some() {
        r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
    }
    r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// An attribute name of `attributes`/`excludedAttributes`, without the core schema's URN:
/// (`name.givenName` → `name`, `givenName`; an enterprise attribute keeps its URN as `ext`).
fn split_attr(name: &str) -> (Option<String>, String, Option<String>) {
    let name = name.trim();
    let lower = name.to_ascii_lowercase();
    let ext = latchkey_domain::scim::patch::ENTERPRISE;
    let (ext_key, rest) = if lower.starts_with(&ext.to_ascii_lowercase()) {
        (Some(ext.to_owned()), name[ext.len()..].trim_start_matches(':'))
    } else if lower.starts_with("urn:") {
        (None, name.rsplit(':').next().unwrap_or(name))
    } else {
        (None, name)
    };
    let mut parts = rest.splitn(2, '.');
    let attr = parts.next().unwrap_or("").to_ascii_lowercase();
    (ext_key, attr, parts.next().map(str::to_ascii_lowercase))
}

/// Applies `attributes` (only these, with `id` and `schemas`) or `excludedAttributes` (all
/// but these) to one resource (RFC 7644 §3.4.2.5).
fn project(resource: &mut Value, only: Option<&str>, excluded: Option<&str>) {
    let Some(obj) = resource.as_object_mut() else { return };
    let list = |v: &str| v.split(',').filter(|a| !a.trim().is_empty()).map(split_attr).collect::<Vec<_>>();
    if let Some(only) = only.map(list) {
        let keep = |key: &str, ext: Option<&str>, sub: Option<&str>| {
            only.iter().any(|(e, a, s)| {
                e.as_deref() == ext
                    && a.eq_ignore_ascii_case(key)
                    && (s.is_none() || sub.is_none() || s.as_deref() == sub)
            })
        };
        let keys: Vec<String> = obj.keys().cloned().collect();
        for k in keys {
            if k == "id" || k == "schemas" {
                continue;
            }
            if k.starts_with("urn:") {
                let wanted = only.iter().any(|(e, ..)| e.as_deref() == Some(k.as_str()));
                match obj.get_mut(&k).and_then(Value::as_object_mut) {
                    Some(ext) if wanted => {
                        let inner: Vec<String> = ext.keys().cloned().collect();
                        for i in inner {
                            let lower = i.to_ascii_lowercase();
                            let whole = only.iter().any(|(e, a, _)| e.as_deref() == Some(k.as_str()) && a.is_empty());
                            if !whole && !keep(&lower, Some(&k), None) {
                                ext.remove(&i);
                            }
                        }
                    }
                    _ => {
                        obj.remove(&k);
                    }
                }
                continue;
            }
            if !keep(&k.to_ascii_lowercase(), None, None) {
                obj.remove(&k);
                continue;
            }
            // Sub-attributes named: only those of a complex attribute.
            let subs: Vec<&String> = only
                .iter()
                .filter(|(e, a, s)| e.is_none() && a.eq_ignore_ascii_case(&k) && s.is_some())
                .filter_map(|(_, _, s)| s.as_ref())
                .collect();
            if !subs.is_empty()
                && let Some(Value::Object(inner)) = obj.get_mut(&k)
            {
                inner.retain(|i, _| subs.iter().any(|s| s.eq_ignore_ascii_case(i)));
            }
        }
    }
    if let Some(excluded) = excluded.map(list) {
        for (ext, attr, sub) in excluded {
            if attr == "id" || attr == "schemas" {
                continue;
            }
            let target = match &ext {
                Some(e) if attr.is_empty() => {
                    obj.remove(e);
                    continue;
                }
                Some(e) => obj.get_mut(e).and_then(Value::as_object_mut),
                None => Some(&mut *obj),
            };
            let Some(target) = target else { continue };
            let key = target.keys().find(|k| k.eq_ignore_ascii_case(&attr)).cloned();
            match (key, sub) {
                (Some(k), None) => {
                    target.remove(&k);
                }
                (Some(k), Some(s)) => {
                    if let Some(Value::Object(inner)) = target.get_mut(&k) {
                        inner.retain(|i, _| !i.eq_ignore_ascii_case(&s));
                    }
                }
                _ => {}
            }
        }
    }
}

/// [`project`] on an answer: its resource, or each resource of a list.
fn projected(mut a: Answer, only: Option<&str>, excluded: Option<&str>) -> Answer {
    if only.is_none() && excluded.is_none() {
        return a;
    }
    if let Some(body) = a.body.as_mut() {
        match body.get_mut("Resources").and_then(Value::as_array_mut) {
            Some(items) => items.iter_mut().for_each(|r| project(r, only, excluded)),
            None => project(body, only, excluded),
        }
    }
    a
}

fn answer(a: Answer) -> Response<Body> {
    let status = StatusCode::from_u16(a.status).unwrap_or(StatusCode::OK);
    let mut r = respond(status, a.body.as_ref());
    if let Some(v) = a.version
        && let Ok(h) = HeaderValue::from_str(&scim::etag(v))
    {
        r.headers_mut().insert(header::ETAG, h);
    }
    if let Some(l) = a.location
        && let Ok(h) = HeaderValue::from_str(&l)
    {
        r.headers_mut().insert(header::LOCATION, h);
    }
    r
}

fn not_found() -> Error {
    Error::not_found(
        codes::NOT_FOUND,
        "no such SCIM endpoint: /Users, /Groups, /ServiceProviderConfig, /ResourceTypes, /Schemas",
    )
}

fn wrong_method(allowed: &str) -> Error {
    Error::new(Kind::MethodNotAllowed, codes::METHOD_NOT_ALLOWED, format!("this endpoint takes {allowed}"))
}

/// A request body: SCIM's media type or JSON, at most the JSON body limit, an object.
async fn body(cx: &Cx<'_>, req: Req) -> Result<Value, Error> {
    let media = header_text(req.headers(), header::CONTENT_TYPE)
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase());
    if !matches!(media.as_deref(), Some("application/scim+json" | "application/json")) {
        return Err(Error::new(
            Kind::UnsupportedMediaType,
            codes::UNSUPPORTED_MEDIA_TYPE,
            "send the body with Content-Type: application/scim+json",
        ));
    }
    let bytes = read_bounded(req, cx.state.config.limits.json_body_max).await?;
    scim::object(&bytes)
}

/// The operations of a PATCH body.
fn operations(body: &Value) -> Result<Vec<Value>, Error> {
    let schemas_ok = body["schemas"].as_array().is_some_and(|s| s.iter().any(|x| x == scim::PATCH_SCHEMA));
    if !schemas_ok {
        return Err(scim::invalid(
            codes::SCIM_INVALID_SYNTAX,
            format!("a PATCH body names the schema {}", scim::PATCH_SCHEMA),
        ));
    }
    let ops = body
        .get("Operations")
        .or_else(|| body.get("operations"))
        .and_then(Value::as_array)
        .ok_or_else(|| scim::invalid(codes::SCIM_INVALID_SYNTAX, "a PATCH body has Operations"))?;
    if ops.is_empty() || ops.len() > 1000 {
        return Err(scim::invalid(codes::SCIM_INVALID_SYNTAX, "Operations holds 1 to 1,000 operations"));
    }
    Ok(ops.clone())
}

fn query(req: &Req) -> std::collections::HashMap<String, String> {
    url::form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes())
        .map(|(k, v)| (k.to_ascii_lowercase(), v.into_owned()))
        .collect()
}

/// Serves `rest`, the path below `/scim/v2`.
pub async fn serve(cx: &Cx<'_>, req: Req, rest: &str) -> Response<Body> {
    match route(cx, req, rest).await {
        Ok(a) => answer(a),
        Err(e) => error(&e),
    }
}

async fn route(cx: &Cx<'_>, req: Req, rest: &str) -> Result<Answer, Error> {
    let q = query(&req);
    let searching = rest.trim_matches('/').ends_with("/.search") || rest.trim_matches('/') == ".search";
    let (only, excluded) = (q.get("attributes").cloned(), q.get("excludedattributes").cloned());
    if searching {
        return search(cx, req, rest).await;
    }
    let a = resources(cx, req, rest, q).await?;
    Ok(projected(a, only.as_deref(), excluded.as_deref()))
}

/// `POST /Users/.search`, `/Groups/.search` (RFC 7644 §3.4.3): a query in the body.
async fn search(cx: &Cx<'_>, req: Req, rest: &str) -> Result<Answer, Error> {
    if req.method() != Method::POST {
        return Err(wrong_method("POST"));
    }
    let kind = rest.trim_matches('/').trim_end_matches(".search").trim_end_matches('/').to_owned();
    if !["Users", "Groups", ""].contains(&kind.as_str()) {
        return Err(not_found());
    }
    authenticate(cx, &req).await?;
    let b = body(cx, req).await?;
    let text = |k: &str| {
        b.get(k).and_then(|v| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Array(a) => Some(a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(",")),
            _ => None,
        })
    };
    let filter = text("filter")
        .map(|f| scim::filter::parse(&f).map_err(|e| scim::invalid(codes::SCIM_INVALID_FILTER, e)))
        .transpose()?;
    let (start, count) = scim::page(text("startIndex").as_deref(), text("count").as_deref())?;
    let (only, excluded) = (text("attributes"), text("excludedAttributes"));
    let no_members =
        excluded.as_deref().is_some_and(|v| v.split(',').any(|a| a.trim().eq_ignore_ascii_case("members")));
    let a = match kind.as_str() {
        "Users" => users::list(cx.state, &cx.tenant, filter, start, count).await?,
        "Groups" => groups::list(cx.state, &cx.tenant, filter, start, count, no_members).await?,
        // At the root: users, then groups, one list (RFC 7644 §3.4.3).
        _ => {
            let all = usize::MAX / 2;
            let mut found = vec![];
            for a in [
                users::list(cx.state, &cx.tenant, filter.clone(), 1, all).await?,
                groups::list(cx.state, &cx.tenant, filter, 1, all, no_members).await?,
            ] {
                if let Some(Value::Array(items)) = a.body.and_then(|mut b| b.get_mut("Resources").map(Value::take)) {
                    found.extend(items);
                }
            }
            Answer::ok(scim::list_response(found, start, count))
        }
    };
    Ok(projected(a, only.as_deref(), excluded.as_deref()))
}

async fn authenticate(cx: &Cx<'_>, req: &Req) -> Result<(), Error> {
    let token = bearer(req.headers());
    let tenant = std::sync::Arc::clone(&cx.tenant);
    let now = cx.now();
    cx.state.db.read(move |tx| scim::authenticate(tx, &tenant, token.as_deref(), now)).await
}

async fn resources(
    cx: &Cx<'_>,
    req: Req,
    rest: &str,
    q: std::collections::HashMap<String, String>,
) -> Result<Answer, Error> {
    let state = cx.state;
    let t = &cx.tenant;
    authenticate(cx, &req).await?;
    let base = t.base_url.clone();
    let segs: Vec<&str> = rest.trim_matches('/').split('/').filter(|s| !s.is_empty()).collect();
    let if_match = header_text(req.headers(), header::IF_MATCH).map(str::to_owned);
    let method = req.method().clone();
    let filter = || -> Result<Option<scim::filter::Filter>, Error> {
        q.get("filter")
            .map(|f| scim::filter::parse(f).map_err(|e| scim::invalid(codes::SCIM_INVALID_FILTER, e)))
            .transpose()
    };
    let page = || scim::page(q.get("startindex").map(String::as_str), q.get("count").map(String::as_str));
    let exclude_members =
        q.get("excludedattributes").is_some_and(|v| v.split(',').any(|a| a.trim().eq_ignore_ascii_case("members")));
    match (segs.as_slice(), &method) {
        (["ServiceProviderConfig"], &Method::GET) => Ok(Answer::ok(schemas::service_provider_config(&base))),
        (["ResourceTypes"], &Method::GET) => {
            let all = schemas::resource_types(&base);
            let n = all.len();
            Ok(Answer::ok(scim::list_response(all, 1, n)))
        }
        (["ResourceTypes", id], &Method::GET) => {
            schemas::resource_types(&base).into_iter().find(|r| r["id"] == *id).map(Answer::ok).ok_or_else(not_found)
        }
        (["Schemas"], &Method::GET) => {
            let all = schemas::schemas(&base);
            let n = all.len();
            Ok(Answer::ok(scim::list_response(all, 1, n)))
        }
        (["Schemas", id], &Method::GET) => {
            schemas::schemas(&base).into_iter().find(|s| s["id"] == *id).map(Answer::ok).ok_or_else(not_found)
        }
        (["ServiceProviderConfig" | "ResourceTypes" | "Schemas", ..], _) => Err(wrong_method("GET")),
        (["Users"], &Method::GET) => {
            let (start, count) = page()?;
            users::list(state, t, filter()?, start, count).await
        }
        (["Users"], &Method::POST) => users::create(state, t, body(cx, req).await?).await,
        (["Users", id], &Method::GET) => users::get(state, t, (*id).to_owned()).await,
        (["Users", id], &Method::PUT) => {
            let id = (*id).to_owned();
            users::update(state, t, id, scim::Change::Replace(body(cx, req).await?), if_match).await
        }
        (["Users", id], &Method::PATCH) => {
            let id = (*id).to_owned();
            let ops = operations(&body(cx, req).await?)?;
            users::update(state, t, id, scim::Change::Patch(ops), if_match).await
        }
        (["Users", id], &Method::DELETE) => users::delete(state, t, (*id).to_owned(), if_match).await,
        (["Groups"], &Method::GET) => {
            let (start, count) = page()?;
            groups::list(state, t, filter()?, start, count, exclude_members).await
        }
        (["Groups"], &Method::POST) => groups::create(state, t, body(cx, req).await?).await,
        (["Groups", id], &Method::GET) => groups::get(state, t, (*id).to_owned(), exclude_members).await,
        (["Groups", id], &Method::PUT) => {
            let id = (*id).to_owned();
            groups::update(state, t, id, scim::Change::Replace(body(cx, req).await?), if_match).await
        }
        (["Groups", id], &Method::PATCH) => {
            let id = (*id).to_owned();
            let ops = operations(&body(cx, req).await?)?;
            groups::update(state, t, id, scim::Change::Patch(ops), if_match).await
        }
        (["Groups", id], &Method::DELETE) => groups::delete(state, t, (*id).to_owned(), if_match).await,
        (["Users" | "Groups"], _) => Err(wrong_method("GET, POST")),
        (["Users" | "Groups", _], _) => Err(wrong_method("GET, PUT, PATCH, DELETE")),
        _ => Err(not_found()),
    }
}
