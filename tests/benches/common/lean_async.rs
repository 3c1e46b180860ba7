//! The lean client's requests from one event-loop thread: many kept-alive connections driven by
//! one current-thread tokio runtime, as `wrk` drives its connections. Sixteen blocking client
//! threads each sleep and wake once per request; on two cores those wake-ups and context
//! switches are taken from the server under test.
#![allow(dead_code)]

use std::future::Future;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::lean::{self, Answer};

/// Runs `client` for every one of `states` at once, each as a task with its own client of the
/// server at `authority`, every task on one current-thread runtime; their results, in the order
/// they finished.
pub fn clients<S, R, Fut>(authority: &str, states: Vec<S>, client: impl Fn(S, AsyncLean) -> Fut) -> Vec<R>
where
    R: Send + 'static,
    Fut: Future<Output = R> + Send + 'static,
{
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    runtime.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        for state in states {
            tasks.spawn(client(state, AsyncLean::new(authority)));
        }
        tasks.join_all().await
    })
}

pub struct AsyncLean {
    authority: String,
    conn: Option<BufReader<TcpStream>>,
    request: Vec<u8>,
}

impl AsyncLean {
    /// A client of the server at `authority` (`host:port`); it connects on first use.
    pub fn new(authority: &str) -> AsyncLean {
        AsyncLean { authority: authority.to_owned(), conn: None, request: Vec::with_capacity(4096) }
    }

    /// `POST path` with `body` of `content_type` and the extra `headers`. Answers are read by
    /// their `Content-Length` (Latchkey's and the peers' are).
    pub async fn post(&mut self, path: &str, content_type: &str, body: &[u8], headers: &[(&str, &str)]) -> Answer {
        lean::request(&mut self.request, &self.authority, path, content_type, body, headers);
        // A kept-alive connection the server has closed meanwhile fails on first use: once more.
        match self.exchange().await {
            Ok(a) => a,
            Err(_) => {
                self.conn = None;
                self.exchange().await.unwrap_or_else(|e| panic!("POST {path} to {}: {e}", self.authority))
            }
        }
    }

    async fn exchange(&mut self) -> std::io::Result<Answer> {
        if self.conn.is_none() {
            let s = TcpStream::connect(&self.authority).await?;
            s.set_nodelay(true)?;
            self.conn = Some(BufReader::with_capacity(16 * 1024, s));
        }
        let conn = self.conn.as_mut().expect("connected");
        conn.get_mut().write_all(&self.request).await?;
        let mut line = String::new();
        if conn.read_line(&mut line).await? == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "connection closed"));
        }
        let status = lean::status(&line);
        let mut head = lean::Head::default();
        loop {
            line.clear();
            conn.read_line(&mut line).await?;
            if !head.read(&line) {
                break;
            }
        }
        assert!(!head.chunked, "a chunked answer: this client reads answers by their Content-Length");
        let mut body = vec![0; head.length.unwrap_or(0)];
        conn.read_exact(&mut body).await?;
        if head.close {
            self.conn = None;
        }
        Ok(Answer { status, body })
    }
}
