//! Unix: a symbolic link.

pub(super) fn link_dir(to: &std::path::Path, at: &std::path::Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(to, at)
}
