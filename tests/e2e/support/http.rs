//! The HTTP/1.1 plumbing the fake vendor APIs share (fake_api, fake_openai,
//! fake_gemini): a loopback server that hands each parsed request to a handler and
//! writes back the response it returns.
//!
//! Why hand-written on std: each fake needs one or two endpoints, and an HTTP stack as
//! a test dependency would cost more build time than this file.
//!
//! - Listens on 127.0.0.1 only, on a port the kernel picks.
//! - One thread per connection, one request per connection (`Connection: close`), so
//!   no keep-alive bookkeeping, and an SSE body simply ends at the close. The CLIs may
//!   hold an idle connection open while they send on another, hence the threads.
//! - Every request is recorded in arrival order, before its answer goes out: once a
//!   CLI has the answer, a test sees the request.
//! - Every loop is bounded: the accept loop by a connection count and a lifetime,
//!   reads by timeouts and size caps. Dropping the server stops the accept loop and
//!   joins every thread.

// A test uses only part of this API.

use serde::Serialize;
use serde_json::Value;
use std::io::{self, BufWriter, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Caps that keep a misbehaving client (or test) from hanging or exhausting anything.
const MAX_CONNECTIONS: usize = 512;
const MAX_LIFETIME: Duration = Duration::from_secs(15 * 60);
const IO_TIMEOUT: Duration = Duration::from_secs(20);
const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 32 * 1024 * 1024;

/// One HTTP request as received, so a test can assert on what a CLI sent.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    /// Path including any query string, e.g. `/v1/messages?beta=true`.
    pub path: String,
    pub body: Vec<u8>,
}

impl Request {
    /// The body as JSON, when it is JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The path without its query string.
    pub fn route(&self) -> &str {
        self.path.split('?').next().unwrap_or("")
    }
}

/// What a handler sends back.
pub struct Response {
    pub status: u16,
    /// Server-sent events (no length: the body ends at the close), else JSON.
    pub sse: bool,
    pub body: Vec<u8>,
    /// Extra headers, e.g. a rate limit's.
    pub headers: Vec<(String, String)>,
}

impl Response {
    pub fn json(status: u16, body: &impl Serialize) -> Response {
        Response {
            status,
            sse: false,
            body: serde_json::to_vec(body).expect("response serializes"),
            headers: Vec::new(),
        }
    }

    /// A 200 event stream of this already formatted body.
    pub fn sse(body: String) -> Response {
        Response {
            status: 200,
            sse: true,
            body: body.into_bytes(),
            headers: Vec::new(),
        }
    }
}

type Handler = dyn Fn(&Request) -> Response + Send + Sync + 'static;

pub struct Server {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    accept_thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Binds 127.0.0.1 on a free port and serves until dropped.
    pub fn start(
        handler: impl Fn(&Request) -> Response + Send + Sync + 'static,
    ) -> io::Result<Server> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        // Non-blocking accept so the loop can notice `stop` without a wake-up connection.
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let (reqs, stop2) = (requests.clone(), stop.clone());
        let accept_thread = std::thread::spawn(move || accept_loop(listener, handler, reqs, stop2));
        Ok(Server {
            addr,
            requests,
            stop,
            accept_thread: Some(accept_thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.accept_thread.take() {
            let _ = t.join();
        }
    }
}

fn accept_loop(
    listener: TcpListener,
    handler: Arc<Handler>,
    requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
) {
    let started = Instant::now();
    let mut workers: Vec<JoinHandle<()>> = Vec::new();
    while !stop.load(Ordering::SeqCst)
        && workers.len() < MAX_CONNECTIONS
        && started.elapsed() < MAX_LIFETIME
    {
        match listener.accept() {
            Ok((stream, _)) => {
                let (h, r) = (handler.clone(), requests.clone());
                workers.push(std::thread::spawn(move || {
                    // A broken connection only affects that one request.
                    let _ = serve_one(stream, &*h, &r);
                }));
            }
            // WouldBlock (nothing pending) or a transient accept error: poll again shortly.
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    // Workers are bounded by IO_TIMEOUT, so joining cannot hang for long.
    for w in workers {
        let _ = w.join();
    }
}

fn serve_one(
    mut stream: TcpStream,
    handler: &Handler,
    requests: &Mutex<Vec<Request>>,
) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let req = read_request(&mut stream)?;
    requests.lock().unwrap().push(req.clone());
    let response = handler(&req);
    write_response(&mut stream, &response)
}

/// Reads one request: head up to `\r\n\r\n`, then a Content-Length or chunked body.
fn read_request(stream: &mut TcpStream) -> io::Result<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_HEAD {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "head too large"));
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut rest = buf[head_end + 4..].to_vec();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let method = first.next().unwrap_or("").to_string();
    let path = first.next().unwrap_or("").to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let chunked =
        get("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let body = if chunked {
        // Read until the terminating zero-size chunk, then decode.
        while find(&rest, b"\r\n0\r\n\r\n").is_none() && !rest.starts_with(b"0\r\n\r\n") {
            if rest.len() > MAX_BODY {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "body too large"));
            }
            let n = stream.read(&mut chunk)?;
            if n == 0 {
                break;
            }
            rest.extend_from_slice(&chunk[..n]);
        }
        decode_chunked(&rest)
    } else {
        let len: usize = get("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
            .min(MAX_BODY);
        while rest.len() < len {
            let n = stream.read(&mut chunk)?;
            if n == 0 {
                break;
            }
            rest.extend_from_slice(&chunk[..n]);
        }
        rest.truncate(len);
        rest
    };
    Ok(Request { method, path, body })
}

fn decode_chunked(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    // Each iteration consumes one chunk; the data is finite so this ends.
    while let Some(eol) = find(data, b"\r\n") {
        let size_txt = String::from_utf8_lossy(&data[..eol]);
        let size =
            usize::from_str_radix(size_txt.split(';').next().unwrap_or("").trim(), 16).unwrap_or(0);
        if size == 0 || data.len() < eol + 2 + size {
            break;
        }
        out.extend_from_slice(&data[eol + 2..eol + 2 + size]);
        data = &data[(eol + 4 + size).min(data.len())..];
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

/// One buffered write: the status line, headers and body go out together. No
/// `x-should-retry` header is sent, so on an error each CLI applies its own retry policy.
fn write_response(stream: &mut TcpStream, r: &Response) -> io::Result<()> {
    let mut stream = BufWriter::new(stream);
    write!(stream, "HTTP/1.1 {} {}\r\n", r.status, reason(r.status))?;
    if r.sse {
        stream.write_all(b"Content-Type: text/event-stream\r\nCache-Control: no-cache\r\n")?;
    } else {
        write!(
            stream,
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            r.body.len()
        )?;
    }
    for (k, v) in &r.headers {
        write!(stream, "{k}: {v}\r\n")?;
    }
    stream.write_all(b"Request-Id: req_fake\r\nConnection: close\r\n\r\n")?;
    stream.write_all(&r.body)?;
    stream.flush()
}
