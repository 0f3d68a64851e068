//! The agent CLI the hook serves (SPEC §20) and how its texts name an action: a model
//! cannot type a slash command, so a block names the action's instructions by path.

use std::fmt;

/// The agent CLI whose stop hook this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Client {
    #[default]
    Claude,
    Codex,
    Gemini,
}

impl Client {
    pub const ALL: [Client; 3] = [Client::Claude, Client::Codex, Client::Gemini];

    /// The name `TASKIE_CLIENT` takes.
    pub fn name(self) -> &'static str {
        match self {
            Client::Claude => "claude",
            Client::Codex => "codex",
            Client::Gemini => "gemini",
        }
    }

    pub fn parse(name: &str) -> Option<Client> {
        Client::ALL.into_iter().find(|c| c.name() == name)
    }

    /// How its user runs a Taskie action.
    pub fn user_action(self, action: &str) -> String {
        match self {
            // Gemini reads commands/taskie/<action>.toml as /taskie:<action>.
            Client::Claude | Client::Gemini => format!("/taskie:{action}"),
            // The Codex plugin's skills are mentioned with `$`.
            Client::Codex => format!("${}", codex_skill(action)),
        }
    }
}

/// The name of the Codex skill an action becomes (the plugin's `skills/<action>/`).
pub fn codex_skill(action: &str) -> String {
    format!("taskie:{action}")
}

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Client::Claude => "Claude Code",
            Client::Codex => "Codex CLI",
            Client::Gemini => "Gemini CLI",
        })
    }
}

/// Who the hook answers, and where the plugin (or extension) with the actions is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Host {
    pub client: Client,
    /// The plugin's root directory, absolute, when the launcher named it.
    pub root: Option<String>,
}

/// The host a decision assumes when none is given (unit tests, commands): Claude Code
/// without a known plugin directory, which is what the hook's texts were before §20.
pub static CLAUDE: Host = Host {
    client: Client::Claude,
    root: None,
};

impl Host {
    /// What a block tells the model to do to perform `action`: the action's instructions
    /// by absolute path when the plugin is known (its `${CLAUDE_PLUGIN_ROOT}` spelled out,
    /// since only Claude Code expands it); Claude Code also keeps the slash command.
    /// Without a known plugin, Claude Code's slash command, else `taskie continue-plan`,
    /// whose answer names the action.
    pub fn perform(&self, action: &str) -> String {
        match (&self.root, self.client) {
            (Some(root), Client::Claude) => {
                format!("perform /taskie:{action} (its instructions: {root}/actions/{action}.md)")
            }
            (Some(root), _) => format!(
                "follow the instructions in {root}/actions/{action}.md (read ${{CLAUDE_PLUGIN_ROOT}} there as {root})"
            ),
            (None, Client::Claude) => format!("perform /taskie:{action}"),
            (None, _) => format!(
                "perform Taskie's {action} action (run `taskie continue-plan` for its instructions)"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_names_round_trip_and_unknown_names_are_none() {
        for c in Client::ALL {
            assert_eq!(Client::parse(c.name()), Some(c));
        }
        assert_eq!(Client::parse("cursor"), None);
        assert_eq!(Client::parse("Claude"), None);
    }

    #[test]
    fn a_block_names_the_instructions_by_path_when_the_plugin_is_known() {
        let codex = Host {
            client: Client::Codex,
            root: Some("/p".into()),
        };
        assert_eq!(
            codex.perform("post-plan-review"),
            "follow the instructions in /p/actions/post-plan-review.md (read ${CLAUDE_PLUGIN_ROOT} there as /p)"
        );
        let claude = Host {
            client: Client::Claude,
            root: Some("/p".into()),
        };
        assert!(claude.perform("x").starts_with("perform /taskie:x"));
        assert!(claude.perform("x").contains("/p/actions/x.md"));
    }

    #[test]
    fn without_a_plugin_only_claude_code_is_told_a_slash_command() {
        assert_eq!(CLAUDE.perform("x"), "perform /taskie:x");
        for client in [Client::Codex, Client::Gemini] {
            let text = Host { client, root: None }.perform("x");
            assert!(!text.contains("/taskie:"), "{text}");
            assert!(text.contains("taskie continue-plan"), "{text}");
        }
    }

    #[test]
    fn users_run_actions_the_way_their_client_spells_them() {
        assert_eq!(
            Client::Claude.user_action("continue-plan"),
            "/taskie:continue-plan"
        );
        assert_eq!(
            Client::Gemini.user_action("continue-plan"),
            "/taskie:continue-plan"
        );
        assert_eq!(
            Client::Codex.user_action("continue-plan"),
            "$taskie:continue-plan"
        );
    }
}
