//! Taskie's own consecutive-block cap (SPEC §20). Neither Codex CLI nor Gemini CLI caps
//! the blocks of a stop hook, and Gemini resets `stop_hook_active` after a tool call, so
//! the hook counts them itself: one session is never blocked more than `TASKIE_BLOCK_CAP`
//! times without a stop it allowed in between, whatever the block (review, structure
//! error, auto-continue) and whatever the client.

use crate::hook::answer::Answer;
use crate::hook::message;
use crate::model::host::Client;

/// What the cap made of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capped {
    pub answer: Answer,
    /// The blocks in a row after this stop (0: this stop is allowed).
    pub count: u64,
    /// The block this stop would have been, when the cap turned it into an allow.
    pub capped: bool,
}

/// Whether, after `before` blocks in a row, the next block is allowed instead.
pub fn reached(cap: u64, before: u64) -> bool {
    before >= cap
}

/// `answer` after `before` blocks in a row: a block past the cap becomes an allow that
/// says why and what resumes the work; any allow starts the count again.
pub fn apply(cap: u64, before: u64, answer: Answer, client: Client) -> Capped {
    match answer {
        Answer::Block { reason } if reached(cap, before) => Capped {
            answer: Answer::allow(message::block_cap(cap, &reason, client)),
            count: 0,
            capped: true,
        },
        block @ Answer::Block { .. } => Capped {
            answer: block,
            count: before.saturating_add(1),
            capped: false,
        },
        allow => Capped {
            answer: allow,
            count: 0,
            capped: false,
        },
    }
}

/// `capped` when the count of blocks in a row could not be saved (`error`): a block is
/// allowed instead, since a count that cannot be kept cannot hold the cap (a full disk,
/// or `.taskie/blocks` that is not a directory, would otherwise block without end).
pub fn unsaved(capped: Capped, error: &str, client: Client) -> Capped {
    match capped.answer {
        Answer::Block { reason } => Capped {
            answer: Answer::allow(message::block_count_unsaved(error, &reason, client)),
            count: 0,
            capped: false,
        },
        allow => Capped {
            answer: allow,
            ..capped
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_counted_up_to_the_cap_and_the_next_one_is_allowed() {
        let c = Client::Codex;
        let mut count = 0;
        for _ in 0..3 {
            let r = apply(3, count, Answer::block("fix it"), c);
            assert!(r.answer.is_block() && !r.capped);
            count = r.count;
        }
        assert_eq!(count, 3);
        let r = apply(3, count, Answer::block("fix it"), c);
        assert!(!r.answer.is_block() && r.capped);
        assert_eq!(r.count, 0);
        let text = r.answer.text().unwrap();
        assert!(
            text.contains("3 times in a row") && text.contains("fix it"),
            "{text}"
        );
    }

    #[test]
    fn an_allowed_stop_starts_the_count_again() {
        let r = apply(8, 5, Answer::allow("m"), Client::Gemini);
        assert_eq!((r.count, r.capped), (0, false));
        assert_eq!(r.answer, Answer::allow("m"));
        assert_eq!(apply(8, 5, Answer::Allow(None), Client::Claude).count, 0);
    }

    #[test]
    fn a_block_whose_count_cannot_be_saved_is_allowed_and_says_why() {
        let r = unsaved(
            apply(8, 2, Answer::block("fix it"), Client::Gemini),
            "disk full",
            Client::Gemini,
        );
        assert!(!r.answer.is_block());
        let text = r.answer.text().unwrap();
        assert!(
            text.contains("disk full") && text.contains("fix it"),
            "{text}"
        );
        let allow = unsaved(
            apply(8, 2, Answer::allow("m"), Client::Codex),
            "x",
            Client::Codex,
        );
        assert_eq!(allow.answer, Answer::allow("m"));
    }

    #[test]
    fn a_cap_of_zero_never_blocks() {
        let r = apply(0, 0, Answer::block("x"), Client::Claude);
        assert!(r.capped && !r.answer.is_block());
    }
}
