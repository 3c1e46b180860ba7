//! A lean HTTP/1.1 client for the benchmarks' timed loops: one kept-alive connection per client
//! thread, each request written with one `write`, each answer read by its `Content-Length` (or
//! chunked). The load generator shares the cores with the server it measures, so what it spends
//! per request is taken from the server: this one does no URL parsing, name resolution, header
//! maps or per-request allocation beyond the request and answer bytes. Latchkey and its peers are
//! driven by the same client.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

pub struct Lean {
    authority: String,
    conn: Option<BufReader<TcpStream>>,
    request: Vec<u8>,
}

/// An answer: status and body.
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// `http://host:port/path` → (`host:port`, `/path`).
pub fn split(url: &str) -> (String, String) {
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    match rest.find('/') {
        Some(i) => (rest[..i].to_owned(), rest[i..].to_owned()),
        None => (rest.to_owned(), String::new()),
    }
}

impl Lean {
    /// A client of the server at `authority` (`host:port`); it connects on first use.
    pub fn new(authority: &str) -> Lean {
        Lean { authority: authority.to_owned(), conn: None, request: Vec::with_capacity(4096) }
    }

    /// `POST path` with `body` of `content_type` and the extra `headers`.
    pub fn post(&mut self, path: &str, content_type: &str, body: &[u8], headers: &[(&str, &str)]) -> Answer {
        request(&mut self.request, &self.authority, path, content_type, body, headers);
        // A kept-alive connection the server has closed meanwhile fails on first use: once more.
        match self.exchange() {
            Ok(a) => a,
            Err(_) => {
                self.conn = None;
                self.exchange().unwrap_or_else(|e| panic!("POST {path} to {}: {e}", self.authority))
            }
        }
    }

    fn exchange(&mut self) -> std::io::Result<Answer> {
        if self.conn.is_none() {
            let s = TcpStream::connect(&self.authority)?;
            s.set_nodelay(true)?;
            self.conn = Some(BufReader::with_capacity(16 * 1024, s));
        }
        let conn = self.conn.as_mut().expect("connected");
        conn.get_mut().write_all(&self.request)?;
        let mut line = String::new();
        if conn.read_line(&mut line)? == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "connection closed"));
        }
        let status = status(&line);
        let mut head = Head::default();
        loop {
            line.clear();
            conn.read_line(&mut line)?;
            if !head.read(&line) {
                break;
            }
        }
        let Head { length, chunked, close } = head;
        let mut body = vec![];
        if chunked {
            loop {
                line.clear();
                conn.read_line(&mut line)?;
                let size = usize::from_str_radix(line.trim_end(), 16).expect("a chunk size");
                let start = body.len();
                body.resize(start + size + 2, 0);
                conn.read_exact(&mut body[start..])?;
                body.truncate(start + size);
                if size == 0 {
                    break;
                }
            }
        } else if let Some(n) = length {
            body.resize(n, 0);
            conn.read_exact(&mut body)?;
        }
        if close {
            self.conn = None;
        }
        Ok(Answer { status, body })
    }
}

/// `POST path` into `buf`: the request line, `Host`, the content's type and length, `headers`,
/// then `body`.
pub fn request(
    buf: &mut Vec<u8>,
    authority: &str,
    path: &str,
    content_type: &str,
    body: &[u8],
    headers: &[(&str, &str)],
) {
    buf.clear();
    write!(
        buf,
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n",
        body.len()
    )
    .unwrap();
    for (k, v) in headers {
        write!(buf, "{k}: {v}\r\n").unwrap();
    }
    buf.extend_from_slice(b"\r\n");
    buf.extend_from_slice(body);
}

/// The status of an answer's first line.
pub fn status(line: &str) -> u16 {
    line.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("an HTTP status line")
}

/// What an answer's header lines say of its body and connection.
#[derive(Default)]
pub struct Head {
    pub length: Option<usize>,
    pub chunked: bool,
    pub close: bool,
}

impl Head {
    /// Takes one header line; `false` at the blank line that ends them.
    pub fn read(&mut self, line: &str) -> bool {
        let header = line.trim_end();
        if header.is_empty() {
            return false;
        }
        let (name, value) = header.split_once(':').unwrap_or((header, ""));
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            self.length = value.parse::<usize>().ok();
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            self.chunked = value.eq_ignore_ascii_case("chunked");
        } else if name.eq_ignore_ascii_case("connection") {
            self.close = value.eq_ignore_ascii_case("close");
        }
        true
    }
}
