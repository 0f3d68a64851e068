//! The plugin/binary version notice (docs/distribution.md). The plugin's launcher only
//! finds taskie-hook and `exec`s it, telling it where the plugin is (`TASKIE_PLUGIN_ROOT`);
//! the hook compares the plugin's version with its own and, when they differ, says so once
//! per session in the `systemMessage` of its one answer. Done here rather than in the
//! launcher: the hook has already read the event (the session id is in it), so nothing has
//! to copy stdin, and a shell without `cat` or `sed` can lose nothing.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::hook::Settings;
use crate::model::host::Client;
use serde::Deserialize;

/// Session markers older than this are deleted when a new one is written.
const MARKER_LIFETIME: Duration = Duration::from_secs(7 * 24 * 3600);

#[derive(Deserialize)]
struct PluginManifest {
    version: String,
}

/// Where each client's copy of the plugin keeps its version (dist/hosts/generate.sh
/// writes all three from the crate's); which one a root holds says whose copy it is.
const MANIFESTS: [(&str, Client); 3] = [
    (".claude-plugin/plugin.json", Client::Claude),
    (".codex-plugin/plugin.json", Client::Codex),
    ("gemini-extension.json", Client::Gemini),
];

/// The plugin's version and the client it was installed into, from the first client
/// manifest `root` holds.
fn plugin_version(root: &Path) -> Option<(String, Client)> {
    MANIFESTS.iter().find_map(|&(m, client)| {
        let bytes = crate::store::fs::read_regular(&root.join(m), 64 * 1024).ok()??;
        serde_json::from_slice::<PluginManifest>(&bytes)
            .ok()
            .map(|m| (m.version, client))
    })
}

/// Where the once-per-session markers live: `<cache>/notices`.
fn markers_dir(settings: &Settings) -> Option<PathBuf> {
    Some(settings.cache.as_ref()?.join("notices"))
}

/// The notice this stop carries, if any: only when the launcher named the plugin, its
/// version differs from this binary's, and this session has not had it yet. `event` is
/// the raw event, read for the session id only in the mismatch case.
pub fn for_stop(event: &[u8], settings: &Settings) -> Option<String> {
    let (plugin, client) = plugin_version(settings.plugin_root.as_deref()?)?;
    let own = env!("CARGO_PKG_VERSION");
    if plugin == own {
        return None;
    }
    let binary = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "taskie-hook".into());
    let notice = crate::hook::message::version_mismatch(own, &binary, &plugin, client);
    eprintln!("taskie-hook: {notice}");
    let session = crate::hook::input::Event::parse(event)
        .ok()
        .and_then(|e| e.session_id)
        .filter(|s| crate::model::plan_file::safe_name(s));
    let (Some(session), Some(dir)) = (session, markers_dir(settings)) else {
        // No session or no cache: every stop carries it.
        return Some(notice);
    };
    let safe = |v: &str| {
        v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._+-".contains(&b))
    };
    let name = if safe(own) && safe(&plugin) {
        format!("{session}-{own}-{plugin}")
    } else {
        session
    };
    let marker = dir.join(name);
    if marker.exists() {
        return None;
    }
    if fs_err::create_dir_all(&dir).is_ok() {
        let _ = crate::store::atomic::write_unsynced(&marker, b"");
        forget_old_markers(&dir);
    }
    Some(notice)
}

fn forget_old_markers(dir: &Path) {
    let Ok(entries) = crate::store::scan::entries(dir) else {
        return;
    };
    let now = SystemTime::now();
    for (name, _) in entries {
        let path = dir.join(name);
        let old = std::fs::symlink_metadata(&path)
            .and_then(|m| m.modified())
            .is_ok_and(|t| now.duration_since(t).is_ok_and(|age| age > MARKER_LIFETIME));
        if old {
            let _ = std::fs::remove_file(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_and_the_client_are_read_from_whichever_clients_manifest_the_plugin_holds() {
        for (manifest, client) in MANIFESTS {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(manifest);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, r#"{"name": "taskie", "version": "9.8.7"}"#).unwrap();
            assert_eq!(
                plugin_version(dir.path()),
                Some(("9.8.7".to_string(), client)),
                "{manifest}"
            );
        }
        assert_eq!(plugin_version(tempfile::tempdir().unwrap().path()), None);
    }
}
