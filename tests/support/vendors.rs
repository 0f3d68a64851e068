//! Fake `codex` and `gemini` programs with the real CLIs' argv and output shapes
//! (docs/reviewers.md), selected through `TASKIE_CODEX` and `TASKIE_GEMINI`.

use super::Project;
use serde_json::json;

/// How a fake vendor reviewer ends.
#[derive(Clone, Debug)]
pub enum Ending {
    /// Answers with this verdict.
    Verdict(&'static str),
    /// Fails the way the real CLI does on HTTP 429.
    RateLimited,
    /// Answers the way the real CLI does when the account's usage limit is reached
    /// (measured against the pinned CLIs), naming this reset: codex a local time (`11:27 PM`, `Nov
    /// 24th, 2026 12:17 AM`), gemini a delay (`3600s`); `None`: the CLI's usual one.
    UsageLimit(Option<&'static str>),
}

/// A fake of one vendor's CLI.
#[derive(Clone, Debug)]
pub struct Vendor {
    pub ending: Ending,
    pub sleep_secs: Option<f64>,
}

impl Vendor {
    pub fn verdict(v: &'static str) -> Vendor {
        Vendor {
            ending: Ending::Verdict(v),
            sleep_secs: None,
        }
    }
    pub fn pass() -> Vendor {
        Vendor::verdict("PASS")
    }
    pub fn fail() -> Vendor {
        Vendor::verdict("FAIL")
    }
    pub fn rate_limited() -> Vendor {
        Vendor {
            ending: Ending::RateLimited,
            sleep_secs: None,
        }
    }
    pub fn usage_limit() -> Vendor {
        Vendor {
            ending: Ending::UsageLimit(None),
            sleep_secs: None,
        }
    }
    /// At its usage limit, naming `reset` as the time it resets (see [`Ending::UsageLimit`]).
    pub fn usage_limit_until(reset: &'static str) -> Vendor {
        Vendor {
            ending: Ending::UsageLimit(Some(reset)),
            sleep_secs: None,
        }
    }
    pub fn sleep(mut self, secs: f64) -> Vendor {
        self.sleep_secs = Some(secs);
        self
    }

    /// The common head: record the call, the arguments, the recursion guard and stdin,
    /// and nanosecond start/end stamps (`<name>-start`, `<name>-end`) around the work.
    fn head(&self, name: &str) -> String {
        let mut s = format!(
            "#!/bin/sh\nhere=${{0%/*}}\necho run >> \"$here/{name}-calls\"\n\
             : > \"$here/{name}-args\"\nfor a; do printf '%s\\n--END-ARG--\\n' \"$a\" >> \"$here/{name}-args\"; done\n\
             printf '%s' \"$TASKIE_HOOK_SKIP\" > \"$here/{name}-skip\"\ncat > \"$here/{name}-stdin\"\n\
             date +%s%N > \"$here/{name}-start\"\n"
        );
        if let Some(secs) = self.sleep_secs {
            s.push_str(&format!("sleep {secs}\n"));
        }
        s.push_str(&format!("date +%s%N > \"$here/{name}-end\"\n"));
        s
    }

    /// `codex exec --json …`: JSONL events; the final agent message is the structured
    /// answer. Keeps a copy of the `--output-schema` file it was given.
    pub fn codex_script(&self) -> String {
        let mut s = self.head("codex");
        s.push_str(
            "prev=\nfor a; do [ \"$prev\" = --output-schema ] && cp \"$a\" \"$here/codex-schema\"; prev=$a; done\n",
        );
        let lines = match &self.ending {
            Ending::Verdict(v) => {
                let answer = json!({"findings": if *v == "PASS" { vec![] } else { vec!["The parser drops the last line"] },
                    "summary": format!("Codex looked at the plan and says {v}."), "verdict": v})
                .to_string();
                vec![
                    json!({"type":"thread.started","thread_id":"t-1"}),
                    json!({"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata not found"}}),
                    json!({"type":"turn.started"}),
                    json!({"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":answer}}),
                    json!({"type":"turn.completed","usage":{"input_tokens":1234,"cached_input_tokens":0,"output_tokens":56,"reasoning_output_tokens":0}}),
                ]
            }
            Ending::RateLimited => {
                let m = "exceeded retry limit, last status: 429 Too Many Requests";
                vec![
                    json!({"type":"turn.started"}),
                    json!({"type":"error","message":m}),
                    json!({"type":"turn.failed","error":{"message":m}}),
                ]
            }
            Ending::UsageLimit(reset) => {
                let m = format!(
                    "You\u{2019}ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at {}.",
                    reset.unwrap_or("11:27 PM")
                );
                vec![
                    json!({"type":"thread.started","thread_id":"t-1"}),
                    json!({"type":"turn.started"}),
                    json!({"type":"error","message":m}),
                    json!({"type":"turn.failed","error":{"message":m}}),
                ]
            }
        };
        let out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        s.push_str(&format!(
            "cat <<'TASKIE_EOF'\n{}\nTASKIE_EOF\n",
            out.join("\n")
        ));
        s.push_str(match self.ending {
            Ending::Verdict(_) => "exit 0\n",
            Ending::RateLimited | Ending::UsageLimit(_) => "exit 1\n",
        });
        s
    }

    /// `gemini -p … --output-format json`: one JSON object with `response` and `stats`;
    /// on an API error, nothing on stdout and the error object last on stderr.
    pub fn gemini_script(&self) -> String {
        let mut s = self.head("gemini");
        match &self.ending {
            Ending::Verdict(v) => {
                let out = json!({"session_id":"s-1",
                    "response": format!("## Review\n\nGemini read the plan.\n\n## Findings\n\n- Name the config file\n\nVERDICT: {v}"),
                    "stats":{"models":{"gemini-2.5-pro":{"api":{"totalRequests":2,"totalErrors":0,"totalLatencyMs":53},
                        "tokens":{"input":2345,"prompt":2345,"candidates":67,"total":2412,"cached":0,"thoughts":0,"tool":0}}},
                        "tools":{"totalCalls":0},"files":{"totalLinesAdded":0,"totalLinesRemoved":0}}});
                s.push_str(&format!("cat <<'TASKIE_EOF'\n{out}\nTASKIE_EOF\nexit 0\n"));
            }
            Ending::RateLimited => {
                let err = json!({"session_id":"s-1","error":{"type":"Error","message":"Resource exhausted: quota","code":429}});
                s.push_str(&format!(
                    "echo 'Attempt 1 failed: Resource exhausted: quota. Max attempts reached' >&2\ncat >&2 <<'TASKIE_EOF'\n{err}\nTASKIE_EOF\nexit 173\n"
                ));
            }
            Ending::UsageLimit(reset) => {
                let err = json!({"session_id":"s-1","error":{"type":"Error",
                    "message":format!("You have exhausted your capacity on this model. Your quota will reset after 1h0m0s.\nSuggested retry after {}.", reset.unwrap_or("3600s")),"code":429}});
                s.push_str(&format!(
                    "cat >&2 <<'TASKIE_EOF'\n{err}\nTASKIE_EOF\nexit 173\n"
                ));
            }
        }
        s
    }
}

impl Project {
    /// Installs the fake `codex` (used when `reviewers` names codex).
    pub fn codex(self, fake: &Vendor) -> Project {
        self.install("fake-codex", &fake.codex_script());
        self
    }

    /// Installs the fake `gemini`.
    pub fn gemini(self, fake: &Vendor) -> Project {
        self.install("fake-gemini", &fake.gemini_script());
        self
    }

    fn install(&self, name: &str, script: &str) {
        crate::support::write_executable(&self.reviewer_dir().join(name), script);
    }

    /// The arguments of the last run of the fake `codex` or `gemini`.
    pub fn vendor_args(&self, name: &str) -> Vec<String> {
        let text = std::fs::read_to_string(self.reviewer_dir().join(format!("{name}-args")))
            .unwrap_or_else(|e| panic!("{name} never ran: {e}"));
        let mut args: Vec<String> = text.split("\n--END-ARG--\n").map(str::to_owned).collect();
        args.pop();
        args
    }

    pub fn vendor_calls(&self, name: &str) -> usize {
        std::fs::read_to_string(self.reviewer_dir().join(format!("{name}-calls")))
            .map(|s| s.lines().count())
            .unwrap_or(0)
    }

    /// A nanosecond stamp the fake wrote (`start` or `end`).
    pub fn vendor_stamp(&self, name: &str, which: &str) -> u128 {
        std::fs::read_to_string(self.reviewer_dir().join(format!("{name}-{which}")))
            .unwrap_or_else(|e| panic!("{name} wrote no {which} stamp: {e}"))
            .trim()
            .parse()
            .unwrap()
    }
}
