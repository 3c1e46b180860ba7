//! The metrics listener (`server.metrics_listen`, loopback by default): `GET /metrics` in the
//! Prometheus text format, and nothing else. It is a listener of its own, never the public one,
//! because the metrics name every tenant (requests are counted per tenant).

use std::net::SocketAddr;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper::header;
use hyper::{Method, Request, Response, StatusCode};
use latchkey::codes;

use super::Body;
use super::errors;
use super::response::{bytes, with_header_value};
use latchkey_domain::error::{Error, Kind};
use latchkey_domain::state::State;

/// Entry point of the metrics listener.
pub async fn handle(state: Arc<State>, req: Request<Incoming>, peer: SocketAddr) -> Response<Body> {
    let response = match (req.method(), req.uri().path()) {
        (&Method::GET | &Method::HEAD, "/metrics") => bytes(
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            state.metrics.render(&latchkey_domain::metrics::Readings {
                db: state.db.write_stats(),
                health: &state.db.health().await,
                untracked: state.limiter.untracked(),
                signatures: latchkey_domain::oidc::signer::counts(),
                keys_queued: state.keygen.pending(),
            }),
        ),
        (_, "/metrics") => {
            let e = Error::new(Kind::MethodNotAllowed, codes::METHOD_NOT_ALLOWED, "use GET, HEAD here");
            with_header_value(errors::api(&e), header::ALLOW, "GET, HEAD")
        }
        (_, path) => errors::api(&Error::not_found(
            codes::NOT_FOUND,
            format!("no such endpoint: {path}; this listener serves /metrics only"),
        )),
    };
    tracing::debug!(target: "latchkeyd::http", %peer, method = %req.method(), path = %req.uri().path(), route = "metrics", status = response.status().as_u16());
    response
}
