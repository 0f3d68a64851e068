//! The agent CLI the hook serves (SPEC §20) and how its texts name an action: a model
//! cannot type a slash command, so a block names the action's instructions by path.

use std::fmt;

/// The agent CLI whose stop hook this is.
pub type Client = crate::model::vendor::Vendor;

/// The hook's own timeout as Taskie registers it with the clients, in seconds (Gemini's
/// is the same in milliseconds): the plugin's hook files and `taskie run`'s lanes. A
/// review must end before it, or the client ends the hook mid-review; tests hold the
/// hook files to this number.
pub const HOOK_TIMEOUT_SECS: u64 = 1800;

impl Client {
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
    /// A directory holding the actions as `actions/<action>.md`, absolute: the plugin's
    /// root when the launcher named it, else the copy taskie-hook keeps of its own.
    pub root: Option<String>,
    /// Whether the client has the actions as commands of its own, which only Claude Code's
    /// model can run: the Claude Code plugin is installed. A hook registered by hand (no
    /// plugin) has no `/taskie:<action>`.
    pub commands: bool,
}

/// The host a decision assumes when none is given (unit tests, commands): Claude Code
/// with the plugin, which is what the hook's texts were before §20.
pub static CLAUDE: Host = Host {
    client: Client::Claude,
    root: None,
    commands: true,
};

impl Host {
    /// Whether a block keeps `/taskie:<action>`: Claude Code's model runs the slash
    /// command itself, when the plugin gives it one.
    fn slash_commands(&self) -> bool {
        self.client == Client::Claude && self.commands
    }

    /// What a block tells the model to do to perform `action`. Claude Code's model runs
    /// the slash command itself, so its texts stay as they were. Elsewhere (and in Claude
    /// Code without the plugin) a model cannot type one: the action's instructions by
    /// absolute path when a directory of them is known (its `${CLAUDE_PLUGIN_ROOT}`
    /// spelled out, since only Claude Code expands it), else the action's name.
    pub fn perform(&self, action: &str) -> String {
        if self.slash_commands() {
            return format!("/taskie:{action}");
        }
        match &self.root {
            Some(root) => format!(
                "the instructions in {root}/actions/{action}.md (read ${{CLAUDE_PLUGIN_ROOT}} there as {root})"
            ),
            None => format!(
                "Taskie's {action} action (its instructions: actions/{action}.md in the Taskie plugin)"
            ),
        }
    }

    /// A block text as this client's model can act on it: every `/taskie:<action>` in
    /// it named the way [`Host::perform`] does.
    pub fn for_model(&self, text: &str) -> String {
        if self.slash_commands() {
            return text.to_owned();
        }
        let mut out = replace_actions(text, |a| self.perform(a));
        // `taskie continue-plan` answers with a slash command too: say where its
        // instructions are.
        if let Some(root) = &self.root
            && text.contains("`taskie continue-plan`")
        {
            out.push_str(&format!(
                " The action it names as /taskie:<action> has its instructions in {root}/actions/<action>.md."
            ));
        }
        out
    }

    /// A message for the user, with every `/taskie:<action>` spelled as this client runs
    /// it.
    pub fn for_user(&self, text: &str) -> String {
        replace_actions(text, |a| self.client.user_action(a))
    }
}

/// `text` with every `/taskie:<action>` replaced by `with(action)`.
fn replace_actions(text: &str, with: impl Fn(&str) -> String) -> String {
    const MARK: &str = "/taskie:";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(MARK) {
        out.push_str(&rest[..i]);
        let after = &rest[i + MARK.len()..];
        let len = after
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
            .unwrap_or(after.len());
        // An action name ends with a letter or digit ("…/taskie:continue-plan." ends the
        // sentence, not the name).
        let name = after[..len].trim_end_matches('-');
        if name.is_empty() {
            out.push_str(MARK);
        } else {
            out.push_str(&with(name));
        }
        rest = &after[name.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_names_the_instructions_by_path_when_the_plugin_is_known() {
        let codex = Host {
            client: Client::Codex,
            root: Some("/p".into()),
            commands: false,
        };
        assert_eq!(
            codex.for_model("Now perform /taskie:post-plan-review: read x."),
            "Now perform the instructions in /p/actions/post-plan-review.md (read ${CLAUDE_PLUGIN_ROOT} there as /p): read x."
        );
    }

    #[test]
    fn claude_code_texts_stay_as_they_were() {
        let claude = Host {
            client: Client::Claude,
            root: Some("/p".into()),
            commands: true,
        };
        let text = "Now perform /taskie:post-plan-review: read x.";
        assert_eq!(claude.for_model(text), text);
        assert_eq!(CLAUDE.for_model(text), text);
    }

    #[test]
    fn claude_code_without_the_plugin_is_sent_to_the_actions_file() {
        let claude = Host {
            client: Client::Claude,
            root: Some("/c".into()),
            commands: false,
        };
        assert_eq!(
            claude.for_model("Now perform /taskie:post-plan-review: read x."),
            "Now perform the instructions in /c/actions/post-plan-review.md (read ${CLAUDE_PLUGIN_ROOT} there as /c): read x."
        );
    }

    #[test]
    fn without_a_plugin_other_clients_are_sent_to_continue_plan() {
        for client in [Client::Codex, Client::Gemini] {
            let text = Host {
                client,
                root: None,
                commands: false,
            }
            .for_model("write it (/taskie:new-plan).");
            assert!(!text.contains("/taskie:"), "{text}");
            assert!(
                text.contains("actions/new-plan.md in the Taskie plugin"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_text_sending_the_model_to_continue_plan_says_where_actions_are() {
        let h = Host {
            client: Client::Gemini,
            root: Some("/p".into()),
            commands: false,
        };
        let text = h.for_model("run `taskie continue-plan` now and do what it says.");
        assert!(
            text.ends_with("instructions in /p/actions/<action>.md."),
            "{text}"
        );
    }

    #[test]
    fn a_lone_marker_is_kept() {
        let h = Host {
            client: Client::Gemini,
            root: Some("/p".into()),
            commands: false,
        };
        assert_eq!(
            h.for_model("see /taskie: and /taskie:-"),
            "see /taskie: and /taskie:-"
        );
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
