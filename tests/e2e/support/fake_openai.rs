//! A fake OpenAI **Responses API** on loopback, for driving the real `codex exec` offline.
//!
//! Why: Taskie's `codex` reviewer kind must be proven end-to-end with the real CLI, but
//! tests may not reach the network. `codex exec` (0.169) only speaks the Responses API
//! (`wire_api = "chat"` was removed): it POSTs `{base_url}/responses` and reads an SSE
//! stream. The smallest stream it accepts is one `response.output_item.done` carrying an
//! assistant `message`, then `response.completed` (with `usage`, which codex turns into its
//! `turn.completed` token counts). Without `response.completed` codex treats the stream as
//! broken and retries, so it is always sent.
//!
//! The HTTP plumbing (loopback, bounded loops, request recording, stop on drop) is
//! support::http; this file is only what codex is answered.

use super::http::{self, Response};
use serde_json::{Value, json};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

/// One HTTP request as received, so a test can assert on what the CLI sent
/// (model, `text.format` carrying `--output-schema`, instructions, auth header...).
pub use super::http::Request;

/// What the handler wants sent back.
pub enum Reply {
    /// A streamed Responses-API answer made of these output items (see `message`,
    /// `function_call`), then `response.completed` with this usage.
    Output {
        items: Vec<Value>,
        input_tokens: u64,
        output_tokens: u64,
    },
    /// Any JSON body with a status (e.g. for GET /v1/models).
    Json { status: u16, body: Value },
}

/// An assistant message item; for `--output-schema`, `text` is the JSON document itself.
pub fn message(text: &str) -> Value {
    json!({"type": "message", "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

/// A tool call item (e.g. codex's `exec_command` with `{"cmd": "..."}`); codex runs the
/// tool in its sandbox and sends the output back in the next request's `input`.
pub fn function_call(name: &str, arguments: &Value, call_id: &str) -> Value {
    json!({"type": "function_call", "name": name, "arguments": arguments.to_string(), "call_id": call_id})
}

pub struct FakeOpenAi {
    server: http::Server,
}

impl FakeOpenAi {
    /// Binds 127.0.0.1 on a free port and serves until dropped.
    pub fn start<F>(handler: F) -> io::Result<FakeOpenAi>
    where
        F: Fn(&Request) -> Reply + Send + Sync + 'static,
    {
        let seq = AtomicU64::new(0);
        let server = http::Server::start(move |req| {
            let n = seq.fetch_add(1, Ordering::SeqCst) + 1;
            respond(n, handler(req))
        })?;
        Ok(FakeOpenAi { server })
    }

    /// The value for a codex provider's `base_url` (codex appends `/responses`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.server.addr())
    }

    pub fn requests(&self) -> Vec<Request> {
        self.server.requests()
    }
}

fn respond(n: u64, reply: Reply) -> Response {
    match reply {
        Reply::Output {
            items,
            input_tokens,
            output_tokens,
        } => sse(n, items, input_tokens, output_tokens),
        Reply::Json { status, body } => Response::json(status, &body),
    }
}

/// The minimal event sequence codex accepts; the body ends when the connection closes.
fn sse(n: u64, items: Vec<Value>, input: u64, output: u64) -> Response {
    let id = format!("resp_fake_{n}");
    let mut events = vec![json!({"type": "response.created", "response": {"id": id}})];
    for (i, mut item) in items.into_iter().enumerate() {
        item["id"] = json!(format!("item_fake_{n}_{i}"));
        events.push(json!({"type": "response.output_item.done", "output_index": i, "item": item}));
    }
    events.push(
        json!({"type": "response.completed", "response": {"id": id, "usage": {
        "input_tokens": input, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input + output}}}),
    );
    let mut body = String::new();
    for ev in events {
        let kind = ev["type"].as_str().unwrap_or("");
        body.push_str(&format!("event: {kind}\ndata: {ev}\n\n"));
    }
    Response::sse(body)
}
