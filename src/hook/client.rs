//! Which agent CLI is calling (SPEC §20): told by the event itself, so one launcher and one
//! taskie-hook serve all three and no user has to set anything.

use crate::hook::Settings;
use crate::hook::input::Event;
use crate::model::host::{Client, Host};
use std::path::{Component, Path, PathBuf};

/// The client assumed and why, for `--dry-run`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detected {
    pub client: Client,
    pub why: String,
}

/// The client from the event: `AfterAgent` is Gemini CLI's stop event; a `Stop` with a
/// `turn_id` and a `model` is Codex CLI's (Claude Code sends neither); anything else is
/// Claude Code's. `forced` is `TASKIE_CLIENT`'s value, which wins when it names a client.
pub fn detect(event: &Event, forced: Option<&str>) -> Detected {
    let from_event = from_event(event);
    match forced {
        None => from_event,
        Some(name) => match Client::from_name(name) {
            Some(client) => Detected {
                client,
                why: format!("TASKIE_CLIENT={name}"),
            },
            None => Detected {
                why: format!(
                    "{}; TASKIE_CLIENT=\"{name}\" is not claude, codex or gemini, so it was ignored",
                    from_event.why
                ),
                ..from_event
            },
        },
    }
}

fn from_event(event: &Event) -> Detected {
    let (client, why) = match event.hook_event_name.as_deref() {
        Some("AfterAgent") => (Client::Gemini, "the event is AfterAgent"),
        Some("Stop") if event.turn_id.is_some() && event.model.is_some() => {
            (Client::Codex, "the Stop event has a turn_id and a model")
        }
        Some("Stop") => (Client::Claude, "the Stop event has no turn_id and model"),
        Some(_) | None => (
            Client::Claude,
            "the event is neither Gemini's AfterAgent nor Codex's Stop",
        ),
    };
    Detected {
        client,
        why: why.into(),
    }
}

/// The host of this run: the client (`TASKIE_CLIENT`, else the event) and the plugin
/// root the launcher named (`TASKIE_PLUGIN_ROOT`). Without one, taskie-hook was
/// registered by hand (no plugin): the actions are its own copy's ([`own_actions`]), and
/// Claude Code has no `/taskie:<action>`. With one, Claude Code has them when the root is
/// its plugin (a launcher in a checkout, registered by hand, names the checkout).
pub fn current(event: &Event, settings: &Settings) -> (Host, Detected) {
    let detected = detect(event, settings.client.as_deref());
    if detected.why.contains("ignored") {
        eprintln!("taskie-hook: {}", detected.why);
    }
    let named = settings.plugin_root.as_deref().map(plugin_root);
    let commands = detected.client == Client::Claude
        && named
            .as_ref()
            .is_some_and(|r| r.join(".claude-plugin/plugin.json").is_file());
    let root = named
        .or_else(|| own_actions(settings))
        .map(|p| p.display().to_string());
    let host = Host {
        client: detected.client,
        root,
        commands,
    };
    (host, detected)
}

/// Where taskie-hook keeps a copy of the actions it carries, for a hook with no plugin:
/// `<cache>/<version>`, holding `actions/<action>.md` once [`provide_own_actions`] wrote them.
fn own_actions(settings: &Settings) -> Option<PathBuf> {
    Some(settings.cache.as_ref()?.join(env!("CARGO_PKG_VERSION")))
}

/// Writes the actions the binary carries into [`own_actions`] when `host` names that
/// directory and a file is missing: only for a block, whose text names one of them.
pub fn provide_own_actions(host: &Host, settings: &Settings) {
    let (Some(root), Some(own)) = (&host.root, own_actions(settings)) else {
        return;
    };
    if Path::new(root) != own {
        return;
    }
    let dir = own.join("actions");
    for (name, text) in crate::model::actions::ALL {
        let path = dir.join(format!("{name}.md"));
        if path.is_file() {
            continue;
        }
        let written = fs_err::create_dir_all(&dir)
            .and_then(|()| crate::store::atomic::write_unsynced(&path, text.as_bytes()));
        if let Err(e) = written {
            eprintln!("taskie-hook: could not write the action {name} for the agent to read: {e}");
            return;
        }
    }
}

/// The launcher names the plugin as `<its directory>/..`: made absolute and without the
/// `..`, so a model reads a plain path.
fn plugin_root(given: &Path) -> PathBuf {
    let absolute = std::path::absolute(given).unwrap_or_else(|_| given.to_path_buf());
    let mut out = PathBuf::new();
    for c in absolute.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(json: &str) -> Event {
        Event::parse(json.as_bytes()).unwrap()
    }

    #[test]
    fn the_event_tells_which_client_calls() {
        let gemini = event(r#"{"hook_event_name":"AfterAgent","session_id":"s","prompt":"p"}"#);
        assert_eq!(detect(&gemini, None).client, Client::Gemini);
        let codex =
            event(r#"{"hook_event_name":"Stop","turn_id":"t","model":"gpt-5","session_id":"s"}"#);
        assert_eq!(detect(&codex, None).client, Client::Codex);
        let claude = event(r#"{"hook_event_name":"Stop","session_id":"s"}"#);
        assert_eq!(detect(&claude, None).client, Client::Claude);
        // A turn_id alone (or a model alone) is not Codex's event.
        let half = event(r#"{"hook_event_name":"Stop","turn_id":"t"}"#);
        assert_eq!(detect(&half, None).client, Client::Claude);
        assert_eq!(detect(&event("{}"), None).client, Client::Claude);
    }

    #[test]
    fn taskie_client_overrides_the_event_and_a_wrong_value_is_named() {
        let gemini = event(r#"{"hook_event_name":"AfterAgent"}"#);
        let d = detect(&gemini, Some("codex"));
        assert_eq!(
            (d.client, d.why.as_str()),
            (Client::Codex, "TASKIE_CLIENT=codex")
        );
        let d = detect(&gemini, Some("cursor"));
        assert_eq!(d.client, Client::Gemini);
        assert!(
            d.why.contains("\"cursor\" is not claude, codex or gemini"),
            "{}",
            d.why
        );
    }

    #[test]
    fn the_plugin_root_is_made_plain() {
        // Rooted but without a drive on Windows, where it gets the current one.
        assert_eq!(
            plugin_root(Path::new("/home/u/plugins/taskie/hooks/..")),
            std::path::absolute("/home/u/plugins/taskie").unwrap()
        );
        assert!(plugin_root(Path::new("hooks/..")).is_absolute());
    }
}
