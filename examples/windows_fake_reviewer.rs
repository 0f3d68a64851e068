//! A stand-in reviewer for the Windows test tier (`.ci/wine/run.sh`), which cannot run the
//! integration tests' `#!/bin/sh` fakes: built for the Windows target and named by
//! `TASKIE_REVIEWER`, it reads the prompt on stdin as the real CLI does, writes the review
//! file the prompt names, and answers as `claude --print --output-format json` does.
//!
//! `TASKIE_FAKE_VERDICT` (PASS or FAIL, default PASS) is its verdict; `TASKIE_FAKE_SAW`,
//! when set, names a file where it writes the prompt it read, then its arguments.

use std::io::Read;

fn main() {
    let mut prompt = String::new();
    std::io::stdin()
        .read_to_string(&mut prompt)
        .expect("the prompt on stdin");
    let verdict = std::env::var("TASKIE_FAKE_VERDICT").unwrap_or_else(|_| "PASS".into());
    if let Some(saw) = std::env::var_os("TASKIE_FAKE_SAW") {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let said = format!("{prompt}\n--ARGS--\n{}\n", args.join("\n"));
        std::fs::write(saw, said).expect("TASKIE_FAKE_SAW written");
    }
    let review = prompt
        .lines()
        .find_map(|l| l.strip_prefix("- Write your review to exactly this file, creating it: "))
        .expect("the prompt names the review file");
    let findings: Vec<&str> = if verdict == "PASS" {
        vec![]
    } else {
        vec!["The error message does not name the file"]
    };
    let text = format!(
        "# Review\n\n## Findings\n\n{}\n\nVERDICT: {verdict}\n",
        if findings.is_empty() {
            "None.".to_owned()
        } else {
            findings
                .iter()
                .map(|f| format!("- {f}"))
                .collect::<Vec<_>>()
                .join("\n")
        }
    );
    std::fs::write(review.trim(), text).expect("the review file written");
    let output = serde_json::json!({"verdict": verdict, "summary": "Checked by the stand-in reviewer.", "findings": findings});
    let answer = serde_json::json!({
        "type": "result", "subtype": "success", "is_error": false,
        "result": output.to_string(), "structured_output": output,
        "total_cost_usd": 0.01, "num_turns": 1, "duration_ms": 10,
    });
    println!("{answer}");
}
