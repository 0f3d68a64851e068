//! `taskie hook-path`: where the native `taskie-hook` is, for a hook registered by hand.
//! Under an npm install the `taskie-hook` on PATH is a Node launcher that starts the native
//! binary (one Node start, about 60 ms, at every stop); `taskie` itself is that launcher's
//! native sibling, so the binary to register lies beside it.

use std::path::PathBuf;

/// The `taskie-hook` beside this `taskie` (links resolved), or why there is none.
pub fn path() -> Result<PathBuf, String> {
    let exe = std::env::current_exe()
        .and_then(|e| e.canonicalize())
        .map_err(|e| format!("cannot tell where this taskie is: {e}"))?;
    let hook = exe.with_file_name(format!("taskie-hook{}", std::env::consts::EXE_SUFFIX));
    if hook.is_file() {
        Ok(hook)
    } else {
        Err(format!(
            "there is no taskie-hook beside {}: install taskie again (npm install -g taskie, or cargo install --locked --path <a clone of the Taskie repository>)",
            exe.display()
        ))
    }
}
