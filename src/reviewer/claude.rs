//! What the claude reviewer's result object says about its spend (SPEC §18):
//! `total_cost_usd`, `usage.input_tokens`/`output_tokens`, `num_turns`.

use crate::model::spend::Spend;
use crate::reviewer::process::Outcome;
use crate::reviewer::result::CliResult;

/// The spend of a claude run: what its result object reports (read with the one type for
/// that object, `CliResult`), and the process's wall time. Output that is not a result
/// object reports only the time.
pub fn spend(out: Option<&Outcome>) -> Spend {
    let Some(out) = out else {
        return Spend::default();
    };
    let r = CliResult::parse(&out.stdout).unwrap_or_default();
    let usage = r.usage.unwrap_or_default();
    Spend {
        cost_usd: r.total_cost_usd.filter(|c| c.is_finite() && *c >= 0.0),
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        num_turns: r.num_turns,
        reviewer_ms: Some(out.duration.as_millis() as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reviewer::process::Ending;
    use std::time::Duration;

    fn outcome(stdout: &str) -> Outcome {
        Outcome {
            ending: Ending::Exited(0),
            stdout: stdout.as_bytes().to_vec(),
            stdout_truncated: false,
            stderr: Vec::new(),
            stderr_truncated: false,
            stragglers_terminated: false,
            duration: Duration::from_millis(1500),
            pid: 1,
        }
    }

    #[test]
    fn the_result_object_gives_cost_tokens_and_turns() {
        let s = spend(Some(&outcome(
            r#"{"type":"result","subtype":"success","total_cost_usd":0.1234,"num_turns":7,"duration_ms":1400,
                "usage":{"input_tokens":12,"output_tokens":345,"cache_read_input_tokens":9}}"#,
        )));
        assert_eq!(
            s,
            Spend {
                cost_usd: Some(0.1234),
                input_tokens: Some(12),
                output_tokens: Some(345),
                num_turns: Some(7),
                reviewer_ms: Some(1500)
            }
        );
    }

    #[test]
    fn output_that_is_not_a_result_reports_only_the_time() {
        let s = spend(Some(&outcome("not json")));
        assert_eq!(
            (s.cost_usd, s.input_tokens, s.reviewer_ms),
            (None, None, Some(1500))
        );
        assert_eq!(spend(None), Spend::default());
    }
}
