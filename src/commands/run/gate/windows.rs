//! Windows: a directory symbolic link, which needs Developer Mode or an administrator;
//! without either the error says so.

pub(super) fn link_dir(to: &std::path::Path, at: &std::path::Path) -> std::io::Result<()> {
    std::os::windows::fs::symlink_dir(to, at).map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!(
                "cannot link {} to {}: {e} (Windows lets a user make links with Developer \
                 Mode on, or as an administrator)",
                at.display(),
                to.display()
            ),
        )
    })
}
