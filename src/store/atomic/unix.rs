//! Unix: the new file keeps the permission bits of the one it replaces, and a directory is
//! synced to make a rename in it durable. A rename never has to wait.

use super::with_path;
use crate::model::plan_file::TEMP_PREFIX;
use std::fs::Permissions;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

/// A temporary file in `dir` to replace `target` with, with the target's permission bits
/// (0666 less the umask for a new target, as any newly created file gets).
pub(super) fn temp_file_for(target: &Path, dir: &Path) -> io::Result<tempfile::NamedTempFile> {
    let kept = std::fs::symlink_metadata(target)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.permissions().mode() & 0o777);
    // Created no wider than the target (open applies the umask on top), so nobody can
    // open the temporary file with more access than the target grants.
    let tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .permissions(Permissions::from_mode(kept.unwrap_or(0o666)))
        .tempfile_in(dir)
        .map_err(|e| with_path(e, dir))?;
    if let Some(mode) = kept {
        // Exactly the target's bits: the umask may have narrowed them at creation.
        tmp.as_file()
            .set_permissions(Permissions::from_mode(mode))
            .map_err(|e| with_path(e, tmp.path()))?;
    }
    Ok(tmp)
}

/// rename(2) replaces a file whoever holds it open.
pub(super) const REPLACE_RETRIES: &[Duration] = &[];

pub(super) fn may_pass(_: &io::Error) -> bool {
    false
}

/// The directory, open to be synced after a rename in it.
pub(super) fn directory_handle(dir: &Path) -> io::Result<Option<std::fs::File>> {
    Ok(Some(fs_err::File::open(dir)?.into_file()))
}

#[cfg(test)]
mod tests {
    use super::super::write_durable;
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_rewrite_keeps_the_permission_bits_of_the_file_it_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("state.json");
        for bits in [0o644, 0o600, 0o640, 0o664] {
            std::fs::write(&target, b"old").unwrap();
            std::fs::set_permissions(&target, Permissions::from_mode(bits)).unwrap();
            write_durable(&target, b"new").unwrap();
            assert_eq!(mode(&target), bits, "{bits:o}");
        }
    }

    #[test]
    fn a_new_file_gets_the_mode_a_created_file_gets() {
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("state.json");
        write_durable(&ours, b"x").unwrap();
        // Whatever the umask of the test run: the same as a plainly created file.
        let plain = dir.path().join("plain");
        std::fs::write(&plain, b"x").unwrap();
        assert_eq!(mode(&ours), mode(&plain));
    }
}
