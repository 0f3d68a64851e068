//! Which Claude Code session works on which plan (SPEC §17). A binding is one small
//! file, `.taskie/sessions/<session-id>.json`, written atomically; its modification time
//! says when the session last used it.
//!
//! A bound stop reads one binding and one plan, so its cost does not grow with the number
//! of plans. The fallback selection skips plans that another session used recently, so
//! two sessions in one project never run, block or remind about each other's plan.

use crate::model::plan_file::{safe_name, valid_id};
use crate::store::atomic;
use crate::store::fs;
use crate::store::project::Project;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// Bindings unused for longer are deleted when a binding is written.
pub const PRUNE_AFTER: Duration = Duration::from_secs(7 * 24 * 3600);
/// A plan another session used within this long is left alone by an unbound session's
/// stop (SPEC §17: "active in the last 30 minutes").
pub const HELD_FOR: Duration = Duration::from_secs(30 * 60);
/// A bound stop refreshes the binding's time at most this often: the refresh is a write
/// on the every-stop path, and five minutes is fine enough for the 30-minute window.
const REFRESH_EVERY: Duration = Duration::from_secs(5 * 60);
/// Session ids are used in file names; Claude Code's are UUIDs.
const MAX_ID_LEN: usize = 128;

/// A session id that is safe to use as a file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionId(String);

impl SessionId {
    /// `None` for an empty or unsafe id: such a session is treated as having no id,
    /// which is the behaviour of clients that send none.
    pub fn parse(id: &str) -> Option<SessionId> {
        (id.len() <= MAX_ID_LEN && safe_name(id)).then(|| SessionId(id.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The content of a binding file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    pub plan: String,
    /// When the binding was written (RFC 3339, UTC); informational.
    pub bound_at: String,
}

fn file(project: &Project, session: &SessionId) -> PathBuf {
    project
        .sessions()
        .join(format!("{}.json", session.as_str()))
}

/// The session whose binding a name in `.taskie/sessions` is (`<session>.json`); `None`
/// for anything else there (its `.gitignore`, a temporary file).
fn binding_of(name: &std::ffi::OsStr) -> Option<&str> {
    name.to_str().and_then(|n| n.strip_suffix(".json"))
}

/// The names of the bindings in `.taskie/sessions` (only theirs are copied).
fn bindings(dir: &std::path::Path) -> std::io::Result<Vec<std::ffi::OsString>> {
    // Only an ASCII `.json` name can be a binding's, and such bytes are UTF-8 everywhere.
    let is_binding =
        |n: &[u8]| std::str::from_utf8(n).is_ok_and(|n| binding_of(n.as_ref()).is_some());
    let entries = crate::store::scan::entries_named(dir, is_binding)?;
    Ok(entries.into_iter().map(|(name, _)| name).collect())
}

/// Small files only: a binding is a few dozen bytes.
const MAX_BINDING_BYTES: u64 = 4096;

/// A binding and when it was last used; `None` for anything that is not one. Read through
/// the one reader of `.taskie` files (regular files only, never a wait, size-capped); the
/// `lstat` before it refuses a link and gives the time of use.
fn read(path: &std::path::Path) -> Option<(Binding, SystemTime)> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let bytes = fs::read_regular(path, MAX_BINDING_BYTES).ok()??;
    let binding: Binding = serde_json::from_slice(&bytes).ok()?;
    valid_id(&binding.plan).then_some((binding, meta.modified().ok()?))
}

/// The plan this session is bound to, if its directory still exists. Refreshes the
/// binding's time (at most hourly) so an active session keeps its plan.
pub fn bound_plan(project: &Project, session: &SessionId) -> Option<String> {
    let path = file(project, session);
    let (binding, used) = read(&path)?;
    let dir = project.plan_dir(&binding.plan);
    if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    refresh(&path, used);
    Some(binding.plan)
}

/// Marks a binding used now (at most hourly: its time is what keeps it from pruning).
fn refresh(path: &std::path::Path, used: SystemTime) {
    let now = SystemTime::now();
    if now.duration_since(used).unwrap_or_default() > REFRESH_EVERY
        && let Ok(f) = std::fs::File::options().append(true).open(path)
    {
        let _ = f.set_modified(now);
    }
}

/// Another session's use of a plan: which session, and how long ago.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub session: String,
    pub ago: Duration,
}

/// Plans bound to sessions other than `me` and used within [`HELD_FOR`], with the
/// session that used each most recently.
pub fn held_by_others(project: &Project, me: Option<&SessionId>) -> BTreeMap<String, Holder> {
    let mut held: BTreeMap<String, Holder> = BTreeMap::new();
    let dir = project.sessions();
    let Ok(names) = bindings(&dir) else {
        return held;
    };
    let now = SystemTime::now();
    for name in names {
        let Some(id) = binding_of(&name) else {
            continue;
        };
        if me.is_some_and(|m| m.as_str() == id) {
            continue;
        }
        if let Some((binding, used)) = read(&dir.join(&name)) {
            let ago = now.duration_since(used).unwrap_or_default();
            let newer = held.get(&binding.plan).is_none_or(|h| ago < h.ago);
            if ago <= HELD_FOR && newer {
                let session = id.to_owned();
                held.insert(binding.plan, Holder { session, ago });
            }
        }
    }
    held
}

/// Binds `session` to `plan`: the plan is this session's from now on, so other
/// sessions' bindings to it are removed (that is how a session takes a plan over).
/// Bindings unused for [`PRUNE_AFTER`] are deleted on the way. Errors are returned for
/// the caller to report; a binding is a convenience, never a reason to fail a command.
pub fn bind(project: &Project, session: &SessionId, plan: &str) -> std::io::Result<()> {
    let dir = project.sessions();
    // A link would take the binding wherever it points (docs/security.md).
    if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(std::io::Error::other(format!(
            "{} is a symbolic link; replace it with a directory",
            dir.display()
        )));
    }
    // Already this session's plan: nobody else holds it (binding it took it from them),
    // so a review stop of a bound session only marks it used.
    let path = file(project, session);
    if let Some((binding, used)) = read(&path)
        && binding.plan == plan
    {
        refresh(&path, used);
        return Ok(());
    }
    crate::store::project::create_runtime_dir(&dir)?;
    let now = SystemTime::now();
    if let Ok(names) = bindings(&dir) {
        // Only bindings: the directory's .gitignore is not one.
        for name in names {
            let other = dir.join(name);
            if other == path {
                continue;
            }
            match read(&other) {
                Some((b, used))
                    if b.plan == plan
                        || now.duration_since(used).unwrap_or_default() > PRUNE_AFTER =>
                {
                    let _ = std::fs::remove_file(&other);
                }
                _ => {}
            }
        }
    }
    let binding = Binding {
        plan: plan.to_owned(),
        bound_at: crate::clock::stamp(),
    };
    let mut text = serde_json::to_string_pretty(&binding).map_err(std::io::Error::other)?;
    text.push('\n');
    atomic::write_unsynced(&path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, Project) {
        let tmp = tempfile::tempdir().unwrap();
        let p = Project::new(tmp.path());
        for plan in ["a", "b"] {
            std::fs::create_dir_all(p.plan_dir(plan)).unwrap();
        }
        (tmp, p)
    }

    fn age(p: &Project, s: &SessionId, by: Duration) {
        let f = std::fs::File::options()
            .append(true)
            .open(file(p, s))
            .unwrap();
        f.set_modified(SystemTime::now() - by).unwrap();
    }

    #[test]
    fn session_ids_that_are_not_safe_file_names_count_as_none() {
        assert!(SessionId::parse("0b6c4e2a-9f1e-4c1b-8a7d-2f0e6d1c3b5a").is_some());
        // One limit, 128 characters, as docs/design.md says (it used to be the plan ids' 100).
        assert!(SessionId::parse(&"x".repeat(128)).is_some());
        for bad in ["", "../x", "a/b", "a.b", &"x".repeat(129)] {
            assert!(SessionId::parse(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn a_bound_session_finds_its_plan_while_the_plan_exists() {
        let (_t, p) = project();
        let s = SessionId::parse("s1").unwrap();
        assert_eq!(bound_plan(&p, &s), None);
        bind(&p, &s, "a").unwrap();
        assert_eq!(bound_plan(&p, &s).as_deref(), Some("a"));
        std::fs::remove_dir(p.plan_dir("a")).unwrap();
        assert_eq!(bound_plan(&p, &s), None);
    }

    #[test]
    fn plans_used_by_other_sessions_within_half_an_hour_are_held() {
        let (_t, p) = project();
        let (s1, s2) = (
            SessionId::parse("s1").unwrap(),
            SessionId::parse("s2").unwrap(),
        );
        bind(&p, &s1, "a").unwrap();
        bind(&p, &s2, "b").unwrap();
        let held = held_by_others(&p, Some(&s1));
        assert_eq!(held.keys().collect::<Vec<_>>(), ["b"]);
        assert_eq!(held["b"].session, "s2");
        assert_eq!(held_by_others(&p, None).len(), 2);
        age(&p, &s2, HELD_FOR + Duration::from_secs(60));
        assert!(held_by_others(&p, Some(&s1)).is_empty());
    }

    #[test]
    fn binding_a_plan_takes_it_over_and_prunes_old_bindings() {
        let (_t, p) = project();
        let (s1, s2, s3) = (
            SessionId::parse("s1").unwrap(),
            SessionId::parse("s2").unwrap(),
            SessionId::parse("s3").unwrap(),
        );
        bind(&p, &s1, "a").unwrap();
        bind(&p, &s3, "b").unwrap();
        age(&p, &s3, PRUNE_AFTER + Duration::from_secs(60));
        bind(&p, &s2, "a").unwrap();
        assert_eq!(bound_plan(&p, &s1), None, "s2 took plan a over");
        assert_eq!(bound_plan(&p, &s2).as_deref(), Some("a"));
        assert!(!file(&p, &s3).exists(), "unused for a week: pruned");
    }

    #[test]
    fn only_session_json_files_are_bindings_the_rest_of_the_directory_is_left_alone() {
        let (_t, p) = project();
        let s1 = SessionId::parse("s1").unwrap();
        bind(&p, &s1, "b").unwrap();
        // Binding text in names that are not `<session>.json`: not bindings, so neither
        // taken over nor pruned, as `held_by_others` does not count them either.
        let dir = p.sessions();
        let text = "{\"plan\": \"a\", \"bound_at\": \"x\"}\n";
        for name in [".gitignore-like", "notes.txt"] {
            std::fs::write(dir.join(name), text).unwrap();
        }
        assert!(!held_by_others(&p, None).contains_key("a"));
        bind(&p, &SessionId::parse("s2").unwrap(), "a").unwrap();
        for name in [".gitignore-like", "notes.txt"] {
            assert!(dir.join(name).exists(), "{name} was treated as a binding");
        }
    }

    #[test]
    fn binding_a_session_again_to_its_own_plan_rewrites_nothing() {
        let (_t, p) = project();
        let s1 = SessionId::parse("s1").unwrap();
        bind(&p, &s1, "a").unwrap();
        let path = file(&p, &s1);
        // A marker no bind would write: a rewrite would replace it.
        std::fs::write(&path, "{\"plan\": \"a\", \"bound_at\": \"marker\"}\n").unwrap();
        bind(&p, &s1, "a").unwrap();
        assert!(std::fs::read_to_string(&path).unwrap().contains("marker"));
        // Used long ago, it is marked used again, still without a rewrite.
        let old = SystemTime::now() - PRUNE_AFTER;
        std::fs::File::options()
            .append(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
        bind(&p, &s1, "a").unwrap();
        assert!(std::fs::read_to_string(&path).unwrap().contains("marker"));
        let used = std::fs::metadata(&path).unwrap().modified().unwrap();
        assert!(used > old + REFRESH_EVERY, "marked used again");
        bind(&p, &s1, "b").unwrap();
        assert_eq!(bound_plan(&p, &s1).as_deref(), Some("b"));
        assert!(!std::fs::read_to_string(&path).unwrap().contains("marker"));
    }
}
