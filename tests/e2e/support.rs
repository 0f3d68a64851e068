//! The slow tier's support: the fast tier's project builder and fakes (tests/support),
//! plus what only the real CLIs need — installing them, a user's home for them, and fake
//! model APIs on loopback with a scripted model behind them.

#[path = "../support/mod.rs"]
mod shared;
pub use shared::*;

pub mod claude_cli;
pub mod claude_user;
pub mod fake_api;
pub mod fake_gemini;
pub mod fake_openai;
pub mod http;
pub mod scripted_model;
