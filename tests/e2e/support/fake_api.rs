//! A scripted stand-in for the Anthropic Messages API, so tests can drive the
//! real Claude Code CLI offline (`ANTHROPIC_BASE_URL=http://127.0.0.1:<port>`).
//!
//! The HTTP plumbing (loopback, one request per connection, bounded loops, stop
//! on drop) is support::http; this file is what the CLI is answered.
//!
//! - `POST /v1/messages` (the CLI appends `?beta=true`) asks the handler and
//!   answers with server-sent events (the CLI always streams).
//! - Anything else gets a 404 JSON error, and is recorded like the rest, so a
//!   test can assert that the CLI called nothing else.
//! - Every request is recorded in arrival order, with its status, for assertions.
//!
//! Observed with Claude Code 2.1.330 (`--print`, nonessential traffic off): it
//! only ever sends `POST /v1/messages?beta=true` with `"stream": true` and a
//! Content-Length body, and honours HTTP errors with its own retry policy.

// A test uses only part of this API.

use super::http::{self, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

// ---------- what the CLI sends ----------

/// The body of `POST /v1/messages`, reduced to what tests look at.
#[derive(Debug, Clone, Deserialize)]
pub struct Request {
    pub model: String,
    #[serde(default)]
    pub system: Option<Content>,
    pub messages: Vec<Message>,
    #[serde(default)]
    pub tools: Vec<Tool>,
}

/// Roles seen: `user`, `assistant`, and `system` (the CLI inserts system
/// messages, e.g. its environment block and "Stop hook blocking error" notes).
#[derive(Debug, Clone, Deserialize)]
pub struct Message {
    pub role: String,
    pub content: Content,
}

/// The API accepts a plain string or a list of typed blocks.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Blocks(Vec<Block>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    Text {
        text: String,
    },
    ToolUse {
        #[serde(default)]
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        #[serde(default)]
        content: Option<Content>,
        #[serde(default)]
        is_error: bool,
    },
    /// Images, thinking, documents…: present, not needed by tests.
    #[serde(other)]
    Other,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Tool {
    #[serde(default)]
    pub name: String,
}

/// One tool result of the conversation.
#[derive(Debug, Clone)]
pub struct ToolResult {
    pub text: String,
    pub is_error: bool,
}

impl Content {
    pub fn blocks(&self) -> &[Block] {
        match self {
            Content::Text(_) => &[],
            Content::Blocks(b) => b,
        }
    }

    /// The text of the content; with `results`, tool results' text too.
    pub fn text(&self, results: bool) -> String {
        let blocks = match self {
            Content::Text(s) => return s.clone(),
            Content::Blocks(b) => b,
        };
        let parts = blocks.iter().filter_map(|b| match b {
            Block::Text { text } => Some(text.clone()),
            Block::ToolResult {
                content: Some(c), ..
            } if results => Some(c.text(true)),
            _ => None,
        });
        parts.collect::<Vec<_>>().join("\n")
    }
}

impl Request {
    pub fn system_text(&self) -> String {
        self.system
            .as_ref()
            .map(|c| c.text(false))
            .unwrap_or_default()
    }

    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }

    /// A `claude --json-schema` run is recognisable by its `StructuredOutput` tool.
    pub fn has_tool(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.name == name)
    }

    fn last_user(&self) -> Option<&Message> {
        self.messages.iter().rev().find(|m| m.role == "user")
    }

    /// Text blocks of the last user message, tool results excluded. The CLI
    /// adds `<system-reminder>` blocks around the prompt: match substrings.
    pub fn last_user_text(&self) -> String {
        self.last_user()
            .map(|m| m.content.text(false))
            .unwrap_or_default()
    }

    /// The first user message: the prompt given to `claude -p`.
    pub fn first_user_text(&self) -> String {
        let first = self.messages.iter().find(|m| m.role == "user");
        first.map(|m| m.content.text(false)).unwrap_or_default()
    }

    /// True when the last user message carries tool results, i.e. the model is
    /// being asked to continue after its own tool calls.
    pub fn answers_tool_calls(&self) -> bool {
        let blocks = self.last_user().map(|m| m.content.blocks()).unwrap_or(&[]);
        blocks.iter().any(|b| matches!(b, Block::ToolResult { .. }))
    }

    /// Every tool result of the conversation, oldest first.
    pub fn tool_results(&self) -> Vec<ToolResult> {
        let blocks = self.messages.iter().flat_map(|m| m.content.blocks());
        let results = blocks.filter_map(|b| match b {
            Block::ToolResult {
                content, is_error, ..
            } => Some(ToolResult {
                text: content.as_ref().map(|c| c.text(true)).unwrap_or_default(),
                is_error: *is_error,
            }),
            _ => None,
        });
        results.collect()
    }

    /// Assistant turns so far: a simple way to script "step k" of an agent.
    pub fn assistant_turns(&self) -> usize {
        self.messages
            .iter()
            .filter(|m| m.role == "assistant")
            .count()
    }
}

// ---------- what the handler answers ----------

/// The scripted answer to one `/v1/messages` request.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    pub text: Option<String>,
    /// (tool name, JSON input), sent in order after the text.
    pub tool_calls: Vec<(String, Value)>,
    /// Default: `tool_use` when there are tool calls, else `end_turn`.
    pub stop_reason: Option<String>,
    /// Answer with this HTTP error instead: (status, error type, message).
    pub error: Option<(u16, String, String)>,
    /// Headers sent with the error.
    pub headers: Vec<(String, String)>,
}

impl Reply {
    pub fn text(t: impl Into<String>) -> Reply {
        Reply {
            text: Some(t.into()),
            ..Reply::default()
        }
    }

    pub fn tool(name: &str, input: Value) -> Reply {
        Reply::default().and_tool(name, input)
    }

    pub fn and_tool(mut self, name: &str, input: Value) -> Reply {
        self.tool_calls.push((name.to_string(), input));
        self
    }

    /// e.g. `(500, "api_error")`, `(429, "rate_limit_error")`, `(529, "overloaded_error")`.
    pub fn http_error(status: u16, kind: &str, message: &str) -> Reply {
        let error = Some((status, kind.to_string(), message.to_string()));
        Reply {
            error,
            ..Reply::default()
        }
    }

    /// A subscription's 5-hour usage limit, resetting at `reset` (Unix seconds), as the
    /// real API answers it: 429 with the unified rate-limit headers. The
    /// CLI reports it as a usage limit only when signed in with OAuth credentials.
    pub fn usage_limit(reset: i64) -> Reply {
        let mut reply = Reply::http_error(
            429,
            "rate_limit_error",
            "This request would exceed your account's rate limit. Please try again later.",
        );
        reply.headers = vec![
            (
                "anthropic-ratelimit-unified-representative-claim".into(),
                "five_hour".into(),
            ),
            (
                "anthropic-ratelimit-unified-status".into(),
                "rejected".into(),
            ),
            (
                "anthropic-ratelimit-unified-reset".into(),
                reset.to_string(),
            ),
        ];
        reply
    }
}

// ---------- the server ----------

/// One HTTP request as received, whatever its path.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub body: String,
    /// The parsed body, for `/v1/messages` only.
    pub messages: Option<Request>,
    /// The HTTP status answered.
    pub status: u16,
}

pub struct FakeApi {
    server: http::Server,
    log: Arc<Mutex<Vec<Recorded>>>,
}

impl FakeApi {
    pub fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> FakeApi {
        let log = Arc::new(Mutex::new(Vec::new()));
        let log2 = log.clone();
        let server =
            http::Server::start(move |raw| serve(raw, &handler, &log2)).expect("bind 127.0.0.1:0");
        FakeApi { server, log }
    }

    /// The value for `ANTHROPIC_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.server.addr())
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.log.lock().unwrap().clone()
    }
}

/// Answers one request and records it with its status.
fn serve(
    raw: &http::Request,
    handler: &impl Fn(&Request) -> Reply,
    log: &Mutex<Vec<Recorded>>,
) -> Response {
    let mut rec = Recorded {
        method: raw.method.clone(),
        body: String::from_utf8_lossy(&raw.body).into_owned(),
        messages: None,
        status: 0,
    };
    let response = match (rec.method.as_str(), raw.route()) {
        ("POST", "/v1/messages") => match serde_json::from_str::<Request>(&rec.body) {
            Ok(req) => {
                let answer = respond(&req, &handler(&req));
                rec.messages = Some(req);
                answer
            }
            Err(e) => error_response(400, "invalid_request_error", &e.to_string()),
        },
        _ => error_response(404, "not_found_error", "not served by the fake API"),
    };
    rec.status = response.status;
    // Recorded before the answer goes out: once the CLI has it, a test sees it.
    log.lock().unwrap().push(rec);
    response
}

// ---------- responses ----------

#[derive(Serialize, Clone, Copy)]
struct Usage {
    input_tokens: u64,
    output_tokens: u64,
}

/// A content block as the API returns it (also the `content_block_start` payload).
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OutBlock {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
}

#[derive(Serialize)]
struct OutMessage {
    id: String,
    #[serde(rename = "type")]
    kind: &'static str,
    role: &'static str,
    model: String,
    content: Vec<OutBlock>,
    stop_reason: Option<String>,
    stop_sequence: Option<String>,
    usage: Usage,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Delta {
    TextDelta { text: String },
    InputJsonDelta { partial_json: String },
}

#[derive(Serialize)]
struct StopDelta {
    stop_reason: String,
    stop_sequence: Option<String>,
}

/// The SSE events of one streamed message; the `type` of each is also its
/// SSE `event:` name.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: OutMessage,
    },
    ContentBlockStart {
        index: usize,
        content_block: OutBlock,
    },
    ContentBlockDelta {
        index: usize,
        delta: Delta,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: StopDelta,
        usage: Usage,
    },
    MessageStop,
}

impl Event {
    fn name(&self) -> &'static str {
        match self {
            Event::MessageStart { .. } => "message_start",
            Event::ContentBlockStart { .. } => "content_block_start",
            Event::ContentBlockDelta { .. } => "content_block_delta",
            Event::ContentBlockStop { .. } => "content_block_stop",
            Event::MessageDelta { .. } => "message_delta",
            Event::MessageStop => "message_stop",
        }
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn respond(req: &Request, reply: &Reply) -> Response {
    if let Some((status, kind, message)) = &reply.error {
        let mut response = error_response(*status, kind, message);
        response.headers = reply.headers.clone();
        return response;
    }
    let n = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let mut blocks: Vec<OutBlock> = reply
        .text
        .iter()
        .map(|t| OutBlock::Text { text: t.clone() })
        .collect();
    for (i, (name, input)) in reply.tool_calls.iter().enumerate() {
        let id = format!("toolu_fake{n:04}_{i}");
        blocks.push(OutBlock::ToolUse {
            id,
            name: name.clone(),
            input: input.clone(),
        });
    }
    let default_stop = if reply.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    let stop = reply
        .stop_reason
        .clone()
        .unwrap_or_else(|| default_stop.into());
    // Plausible token counts: the CLI turns them into `total_cost_usd`.
    let usage = Usage {
        input_tokens: req.messages.len() as u64 * 100 + 10,
        output_tokens: blocks.len() as u64 * 20 + 10,
    };
    let message = OutMessage {
        id: format!("msg_fake{n:04}"),
        kind: "message",
        role: "assistant",
        model: req.model.clone(),
        content: Vec::new(),
        stop_reason: None,
        stop_sequence: None,
        usage,
    };
    let mut events = vec![Event::MessageStart { message }];
    for (index, block) in blocks.into_iter().enumerate() {
        // A block starts empty and is filled by one delta, as the API does
        // (a tool's input arrives as a JSON string in `input_json_delta`).
        let (content_block, delta) = match block {
            OutBlock::Text { text } => (
                OutBlock::Text {
                    text: String::new(),
                },
                Delta::TextDelta { text },
            ),
            OutBlock::ToolUse { id, name, input } => {
                let partial_json = input.to_string();
                let input = Value::Object(Default::default());
                (
                    OutBlock::ToolUse { id, name, input },
                    Delta::InputJsonDelta { partial_json },
                )
            }
        };
        events.push(Event::ContentBlockStart {
            index,
            content_block,
        });
        events.push(Event::ContentBlockDelta { index, delta });
        events.push(Event::ContentBlockStop { index });
    }
    let delta = StopDelta {
        stop_reason: stop,
        stop_sequence: None,
    };
    events.push(Event::MessageDelta { delta, usage });
    events.push(Event::MessageStop);
    let mut body = String::new();
    for e in &events {
        let data = serde_json::to_string(e).expect("event serializes");
        body.push_str(&format!("event: {}\ndata: {data}\n\n", e.name()));
    }
    Response::sse(body)
}

#[derive(Serialize)]
struct ErrorBody {
    #[serde(rename = "type")]
    kind: &'static str,
    error: ErrorDetail,
}

#[derive(Serialize)]
struct ErrorDetail {
    #[serde(rename = "type")]
    kind: String,
    message: String,
}

/// No `x-should-retry` header is sent, so on an error the CLI applies its own
/// retry policy (1 + 10 attempts, ~3 minutes): bound it in tests with
/// `CLAUDE_CODE_MAX_RETRIES=0`.
fn error_response(status: u16, kind: &str, message: &str) -> Response {
    let error = ErrorDetail {
        kind: kind.to_string(),
        message: message.to_string(),
    };
    Response::json(
        status,
        &ErrorBody {
            kind: "error",
            error,
        },
    )
}
