//! A fake Gemini API (Generative Language API, v1beta) on loopback, for driving the real
//! `gemini` CLI offline.
//!
//! Why: Taskie's `gemini` reviewer kind must be proven end-to-end with the real CLI, but
//! tests may not reach the network. With `GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT`
//! the CLI (0.61, via @google/genai) POSTs
//! `/v1beta/models/<model>:streamGenerateContent?alt=sse` and reads SSE `data:` lines, each
//! a `GenerateContentResponse` (`candidates[0].content.parts[].text`, `finishReason`,
//! `usageMetadata`). A single chunk with `finishReason: "STOP"` is a complete answer. The
//! non-streaming `:generateContent` (used by the CLI's helper calls) gets the same
//! object as plain JSON, and `:countTokens` a `totalTokens`.
//!
//! Only std + serde_json. One thread per connection, one request per connection
//! (`Connection: close`), so no keep-alive bookkeeping is needed. Every loop is bounded:
//! the accept loop by a connection count and a lifetime, reads by timeouts and size caps.
//! Dropping the server stops the accept loop and joins every thread.

use serde_json::{Value, json};
use std::io::{self, BufWriter, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Caps that keep a misbehaving client (or test) from hanging or exhausting anything.
const MAX_CONNECTIONS: usize = 512;
const MAX_LIFETIME: Duration = Duration::from_secs(15 * 60);
const IO_TIMEOUT: Duration = Duration::from_secs(20);
const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 32 * 1024 * 1024;

/// One HTTP request as received, so a test can assert on what the CLI sent
/// (model in the path, `contents`, `systemInstruction`, `x-goog-api-key`...).
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    /// Path including any query string, e.g. `/v1beta/models/m:streamGenerateContent?alt=sse`.
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
    /// The body as JSON, when it is JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// What the handler wants sent back.
pub enum Reply {
    /// A model answer of `text`: SSE for `:streamGenerateContent`, JSON otherwise.
    Text {
        text: String,
        prompt_tokens: u64,
        output_tokens: u64,
    },
    /// An HTTP error with Google's error envelope, e.g. 500 or 429.
    Error { status: u16, message: String },
    /// Any JSON body with a status.
    Json { status: u16, body: Value },
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync + 'static;

pub struct FakeGemini {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    accept_thread: Option<JoinHandle<()>>,
}

impl FakeGemini {
    /// Binds 127.0.0.1 on a free port and serves until dropped.
    pub fn start<F>(handler: F) -> io::Result<FakeGemini>
    where
        F: Fn(&Request) -> Reply + Send + Sync + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        // Non-blocking accept so the loop can notice `stop` without a wake-up connection.
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let (reqs, stop2) = (requests.clone(), stop.clone());
        let accept_thread = std::thread::spawn(move || accept_loop(listener, handler, reqs, stop2));
        Ok(FakeGemini {
            addr,
            requests,
            stop,
            accept_thread: Some(accept_thread),
        })
    }

    /// The value for `GOOGLE_GEMINI_BASE_URL` (the SDK appends `/v1beta/models/...`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for FakeGemini {
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
    let seq = Arc::new(AtomicU64::new(0));
    let mut workers: Vec<JoinHandle<()>> = Vec::new();
    while !stop.load(Ordering::SeqCst)
        && workers.len() < MAX_CONNECTIONS
        && started.elapsed() < MAX_LIFETIME
    {
        match listener.accept() {
            Ok((stream, _)) => {
                let (h, r, s) = (handler.clone(), requests.clone(), seq.clone());
                workers.push(std::thread::spawn(move || {
                    // A broken connection only affects that one request.
                    let _ = serve_one(stream, &*h, &r, &s);
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
    seq: &AtomicU64,
) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let req = read_request(&mut stream)?;
    requests.lock().unwrap().push(req.clone());
    let n = seq.fetch_add(1, Ordering::SeqCst) + 1;
    match handler(&req) {
        Reply::Text {
            text,
            prompt_tokens,
            output_tokens,
        } => {
            let model = req
                .path
                .split("/models/")
                .nth(1)
                .and_then(|m| m.split(':').next())
                .unwrap_or("fake");
            let answer = json!({
                "candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": prompt_tokens, "candidatesTokenCount": output_tokens,
                                  "totalTokenCount": prompt_tokens + output_tokens},
                "modelVersion": model, "responseId": format!("fake-{n}")});
            if req.path.contains(":streamGenerateContent") {
                write_sse(&mut stream, &answer)
            } else if req.path.contains(":countTokens") {
                write_json(&mut stream, 200, &json!({"totalTokens": prompt_tokens}))
            } else {
                write_json(&mut stream, 200, &answer)
            }
        }
        Reply::Error { status, message } => {
            // Google's envelope; the CLI shows `error.message` and keys retries on `code`.
            let kind = match status {
                429 => "RESOURCE_EXHAUSTED",
                400 => "INVALID_ARGUMENT",
                503 => "UNAVAILABLE",
                _ => "INTERNAL",
            };
            let body = json!({"error": {"code": status, "message": message, "status": kind}});
            write_json(&mut stream, status, &body)
        }
        Reply::Json { status, body } => write_json(&mut stream, status, &body),
    }
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
    Ok(Request {
        method,
        path,
        headers,
        body,
    })
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
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

fn write_json(stream: &mut TcpStream, status: u16, body: &Value) -> io::Result<()> {
    let body = body.to_string();
    // One buffered write: the status line, headers and body go out together.
    let mut stream = BufWriter::new(stream);
    write!(
        stream,
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        reason(status),
        body.len()
    )?;
    stream.flush()
}

/// One SSE `data:` event carrying the whole answer; the body ends when the connection closes.
fn write_sse(stream: &mut TcpStream, answer: &Value) -> io::Result<()> {
    let mut stream = BufWriter::new(stream);
    stream.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
    )?;
    write!(stream, "data: {answer}\r\n\r\n")?;
    stream.flush()
}
