//! What the benchmark programs share: starting the host binary and reading
//! its frames.

use serde_json::Value;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Reads one frame; `None` at the end of the stream or on a bad frame.
pub fn read_frame(r: &mut impl Read) -> Option<Value> {
    let mut h = [0u8; 4];
    r.read_exact(&mut h).ok()?;
    let mut body = vec![0u8; u32::from_ne_bytes(h) as usize];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// Starts the host with its data in `dir`, no config file, and a scripted
/// runtime replaying `script` when given.
#[allow(dead_code)] // Each bench uses one of `spawn` and `command`.
pub fn spawn(bin: &str, dir: &Path, script: Option<&Path>) -> Child {
    command(bin, dir, script)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {bin}: {e}"))
}

/// The command [`spawn`] runs, for a bench to add to.
#[allow(dead_code)] // Each bench uses one of `spawn` and `command`.
pub fn command(bin: &str, dir: &Path, script: Option<&Path>) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env("LAIKA_CONFIG", dir.join("none.toml"))
        .env("LAIKA_DATA_DIR", dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(script) = script {
        cmd.env("LAIKA_RUNTIME", "scripted")
            .env("LAIKA_SCRIPT", script);
    }
    cmd
}
