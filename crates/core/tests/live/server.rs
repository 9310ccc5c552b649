//! A tiny HTTP/1.1 server on 127.0.0.1:0 for tests: one thread per connection, one
//! request per connection (`Connection: close`), every request recorded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// Path and query, percent-encoded as sent.
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The decoded value of query parameter `name`.
    pub fn query(&self, name: &str) -> Option<String> {
        let (_, q) = self.target.split_once('?')?;
        q.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k) == name).then(|| decode(v))
        })
    }

    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }
}

/// Percent-decoding with `+` as space.
pub fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'+', _) => out.push(b' '),
            (b'%', Some(b)) => {
                out.push(b);
                i += 2;
            }
            (b, _) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A response to send.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn json(body: impl Into<Vec<u8>>) -> Self {
        Response::with_type(200, "application/json", body)
    }

    pub fn xml(body: impl Into<Vec<u8>>) -> Self {
        Response::with_type(200, "text/xml;charset=UTF-8", body)
    }

    pub fn status(status: u16) -> Self {
        Response::with_type(status, "text/plain", format!("status {status}"))
    }

    pub fn with_type(status: u16, ctype: &str, body: impl Into<Vec<u8>>) -> Self {
        Response {
            status,
            headers: vec![("Content-Type".into(), ctype.into())],
            body: body.into(),
        }
    }

    pub fn header(mut self, k: &str, v: &str) -> Self {
        self.headers.push((k.into(), v.into()));
        self
    }
}

type Handler = dyn Fn(&Request, &str) -> Response + Send + Sync;

/// A running server; it lives until the test process ends.
pub struct Server {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    log: Arc<Mutex<Vec<Request>>>,
}

impl Server {
    /// Starts a server; `handler` gets each request and the server's base URL.
    pub fn start(handler: impl Fn(&Request, &str) -> Response + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let base = format!("http://{}", listener.local_addr().unwrap());
        let log: Arc<Mutex<Vec<Request>>> = Arc::default();
        let handler: Arc<Handler> = Arc::new(handler);
        let (log2, base2) = (log.clone(), base.clone());
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (log, handler, base) = (log2.clone(), handler.clone(), base2.clone());
                thread::spawn(move || {
                    let _ = serve(stream, &log, &*handler, &base);
                });
            }
        });
        Server { base, log }
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }

    /// How many requests so far.
    pub fn count(&self) -> usize {
        self.log.lock().unwrap().len()
    }
}

fn serve(
    stream: TcpStream,
    log: &Mutex<Vec<Request>>,
    handler: &Handler,
    base: &str,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let len = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body)?;
    let req = Request {
        method,
        target,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    log.lock().unwrap().push(req.clone());
    let resp = handler(&req, base);
    let mut out = stream;
    write!(out, "HTTP/1.1 {} X\r\n", resp.status)?;
    for (k, v) in &resp.headers {
        write!(out, "{k}: {v}\r\n")?;
    }
    write!(
        out,
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        resp.body.len()
    )?;
    out.write_all(&resp.body)?;
    out.flush()
}

/// A fixture from `tests/fixtures`, with `{{BASE}}` replaced by `base`.
pub fn fixture(name: &str, base: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .replace("{{BASE}}", base)
}

/// A port on 127.0.0.1 where nothing listens (bound, then released).
pub fn dead_base() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    format!("http://{addr}")
}
