//! The multipart body of `POST /v1/users/invite` (`http/bulk.rs`): multer with the daemon's
//! constraints (per-field limit `invite_file_max`, whole stream that plus 64 KiB), driven the
//! way the handler drives it (every field, chunks of the `file` field collected, a second `file`
//! refused), then the file handed to the CSV parser as the handler does.
//!
//! Input: byte 0 sets the size of the body chunks the stream yields (1..=256, as a socket would
//! split them), byte 1 the per-field limit (in 16-byte steps, so the limit errors are reachable);
//! the rest is the body, with boundary `XBOUNDARY`.

#![no_main]

use std::collections::HashSet;
use std::sync::OnceLock;

use bytes::{Bytes, BytesMut};
use libfuzzer_sys::fuzz_target;

const BOUNDARY: &str = "XBOUNDARY";

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| tokio::runtime::Builder::new_current_thread().build().expect("tokio runtime"))
}

enum Outcome {
    File(Bytes),
    NoFile,
    TooLarge,
    Malformed,
    Several,
}

async fn read(body: Vec<Bytes>, max: u64) -> Outcome {
    let envelope = max + 64 * 1024;
    let stream = futures_util::stream::iter(body.into_iter().map(Ok::<Bytes, std::io::Error>));
    let limits = multer::Constraints::new().size_limit(multer::SizeLimit::new().whole_stream(envelope).per_field(max));
    let mut multipart = multer::Multipart::with_constraints(stream, BOUNDARY, limits);
    let classify = |e: multer::Error| match e {
        multer::Error::StreamSizeExceeded { .. } | multer::Error::FieldSizeExceeded { .. } => Outcome::TooLarge,
        _ => Outcome::Malformed,
    };
    let mut file: Option<Bytes> = None;
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => return classify(e),
        };
        let _ = (field.file_name(), field.content_type(), field.headers().len(), field.index());
        if field.name() != Some("file") {
            continue;
        }
        if file.is_some() {
            return Outcome::Several;
        }
        let mut buf = BytesMut::new();
        let mut field = field;
        loop {
            match field.chunk().await {
                Ok(Some(chunk)) => buf.extend_from_slice(&chunk),
                Ok(None) => break,
                Err(e) => return classify(e),
            }
        }
        assert!(buf.len() as u64 <= max, "field of {} bytes passed a limit of {max}", buf.len());
        file = Some(buf.freeze());
    }
    match file {
        Some(f) => Outcome::File(f),
        None => Outcome::NoFile,
    }
}

fn roles() -> &'static HashSet<String> {
    static R: OnceLock<HashSet<String>> = OnceLock::new();
    R.get_or_init(|| ["staff".to_owned()].into_iter().collect())
}

fuzz_target!(|data: &[u8]| {
    let [chunk, limit, body @ ..] = data else { return };
    let chunk = usize::from(*chunk) + 1;
    let max = (u64::from(*limit) + 1) * 16;
    let parts: Vec<Bytes> = body.chunks(chunk).map(Bytes::copy_from_slice).collect();
    let outcome = runtime().block_on(read(parts, max));
    if let Outcome::File(file) = outcome {
        let _ = latchkey_domain::users::import::parse(&file, roles(), 1000);
    }
});
