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
//! The HTTP plumbing (loopback, bounded loops, request recording, stop on drop) is
//! support::http; this file is only what the gemini CLI is answered.

use super::http::{self, Response};
use serde_json::{Value, json};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

/// One HTTP request as received, so a test can assert on what the CLI sent
/// (model in the path, `contents`, `systemInstruction`, `x-goog-api-key`...).
pub use super::http::Request;

/// What the handler wants sent back.
pub enum Reply {
    /// A model answer of `text`: SSE for `:streamGenerateContent`, JSON otherwise.
    Text {
        text: String,
        prompt_tokens: u64,
        output_tokens: u64,
    },
    /// A model answer made of these `parts` (e.g. a `functionCall`, to drive the CLI as
    /// an agent), streamed like `Text`.
    Parts(Vec<Value>),
    /// An error answer: this HTTP status and body (e.g. a 429 quota answer).
    Error { status: u16, body: Value },
}

impl Reply {
    /// A short text answer with token counts the CLI accepts.
    pub fn text(t: &str) -> Reply {
        Reply::Text {
            text: t.to_owned(),
            prompt_tokens: 100,
            output_tokens: 10,
        }
    }

    /// The API's quota answer: 429 `RESOURCE_EXHAUSTED` with a `RetryInfo` delay. The CLI
    /// retries a delay of up to 300 s itself, within its `general.maxAttempts`, then gives
    /// up saying `Suggested retry after <delay>s.`
    pub fn quota(delay_secs: u64) -> Reply {
        Reply::Error {
            status: 429,
            body: json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
                "message": "You exceeded your current quota, please check your plan and billing details.",
                "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                             "retryDelay": format!("{delay_secs}s")}]}}),
        }
    }
}

/// The body of a model turn the CLI asks for (`:streamGenerateContent`), or the answer to
/// send at once: an empty text for a request without JSON, and "the user speaks next" for
/// the CLI's own helper calls (who speaks next, …).
pub fn turn_body(req: &Request) -> Result<Value, Reply> {
    let Some(body) = req.json() else {
        return Err(Reply::text(""));
    };
    if !req.path.contains(":streamGenerateContent") {
        return Err(Reply::text(
            r#"{"reasoning": "The model finished.", "next_speaker": "user"}"#,
        ));
    }
    Ok(body)
}

pub struct FakeGemini {
    server: http::Server,
}

impl FakeGemini {
    /// Binds 127.0.0.1 on a free port and serves until dropped.
    pub fn start<F>(handler: F) -> io::Result<FakeGemini>
    where
        F: Fn(&Request) -> Reply + Send + Sync + 'static,
    {
        let seq = AtomicU64::new(0);
        let server = http::Server::start(move |req| {
            let n = seq.fetch_add(1, Ordering::SeqCst) + 1;
            respond(req, n, handler(req))
        })?;
        Ok(FakeGemini { server })
    }

    /// The value for `GOOGLE_GEMINI_BASE_URL` (the SDK appends `/v1beta/models/...`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.server.addr())
    }

    pub fn requests(&self) -> Vec<Request> {
        self.server.requests()
    }
}

fn respond(req: &Request, n: u64, reply: Reply) -> Response {
    match reply {
        Reply::Error { status, body } => Response::json(status, &body),
        Reply::Parts(parts) => {
            let answer = json!({
                "candidates": [{"content": {"role": "model", "parts": parts},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
                "responseId": format!("fake-{n}")});
            if req.path.contains(":streamGenerateContent") {
                Response::sse(format!("data: {answer}\r\n\r\n"))
            } else {
                Response::json(200, &answer)
            }
        }
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
                // One SSE `data:` event carrying the whole answer.
                Response::sse(format!("data: {answer}\r\n\r\n"))
            } else if req.path.contains(":countTokens") {
                Response::json(200, &json!({"totalTokens": prompt_tokens}))
            } else {
                Response::json(200, &answer)
            }
        }
    }
}
