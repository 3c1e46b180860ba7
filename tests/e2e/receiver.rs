//! A stand-in HTTP endpoint on loopback for what the daemon posts: back-channel logout tokens
//! and webhook deliveries. It records every request it answers 2xx, and can answer another
//! status, or read a request and never answer (a receiver that hangs).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the endpoint answers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Answer {
    Ok,
    Status(u16),
    /// Reads the request and never answers (for a minute).
    Hang,
}

/// A request as received.
#[derive(Clone, Debug)]
pub struct Hit {
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Hit {
    /// A header's value, or "" when it is absent.
    pub fn header(&self, name: &str) -> &str {
        self.headers.iter().find(|(k, _)| k == name).map_or("", |(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).unwrap()
    }
}

pub struct Receiver {
    pub port: u16,
    hits: Arc<Mutex<Vec<Hit>>>,
    answer: Arc<Mutex<Answer>>,
    hung: Arc<AtomicUsize>,
}

impl Receiver {
    pub fn start() -> Receiver {
        Receiver::serve(TcpListener::bind("127.0.0.1:0").unwrap())
    }

    /// A port where nothing listens (yet): [`Receiver::on`] starts one there.
    pub fn down() -> u16 {
        TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
    }

    pub fn on(port: u16) -> Receiver {
        Receiver::serve(TcpListener::bind(("127.0.0.1", port)).expect("the same port again"))
    }

    fn serve(listener: TcpListener) -> Receiver {
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(Mutex::new(vec![]));
        let answer = Arc::new(Mutex::new(Answer::Ok));
        let hung = Arc::new(AtomicUsize::new(0));
        let (g, a, h) = (hits.clone(), answer.clone(), hung.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (g, a, h) = (g.clone(), a.clone(), h.clone());
                std::thread::spawn(move || handle(stream, &g, &a, &h));
            }
        });
        Receiver { port, hits, answer, hung }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn answer(&self, a: Answer) {
        *self.answer.lock().unwrap() = a;
    }

    /// The requests answered 2xx, in the order they arrived.
    pub fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }

    /// Requests held without an answer.
    pub fn hung(&self) -> usize {
        self.hung.load(Ordering::SeqCst)
    }

    /// Waits (up to `secs` seconds) until `n` requests have been answered 2xx; returns them all.
    pub fn wait_for(&self, n: usize, secs: u64) -> Vec<Hit> {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let hits = self.hits();
            if hits.len() >= n || Instant::now() > deadline {
                return hits;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn handle(stream: TcpStream, hits: &Mutex<Vec<Hit>>, answer: &Mutex<Answer>, hung: &AtomicUsize) {
    let mut reader = BufReader::new(&stream);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
    let mut headers = vec![];
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).is_err() {
            return;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    let len = headers.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = vec![0; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let a = *answer.lock().unwrap();
    let status = match a {
        Answer::Hang => {
            hung.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_secs(60));
            return;
        }
        Answer::Status(s) => s,
        Answer::Ok => {
            hits.lock().unwrap().push(Hit { path, headers, body });
            200
        }
    };
    let mut s = &stream;
    let _ =
        write!(s, "HTTP/1.1 {status} X\r\nContent-Length: 0\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n");
}
