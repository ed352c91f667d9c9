//! The data directory is 0700 and the database, its WAL and shared-memory
//! files and the log are 0600, whatever the umask the browser starts the
//! host with: for a fresh data directory, and for one an older version
//! left 0755 with 0644 files. Checked over the built binary while it runs
//! (the WAL and shared-memory files exist only then).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic
#![cfg(unix)]

mod common;

use common::*;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

const FILES: [&str; 4] = [
    "history.sqlite3",
    "history.sqlite3-wal",
    "history.sqlite3-shm",
    "laika-host.log",
];

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// Starts the scripted host on `dir` under `umask`, runs one turn (so the
/// history, its WAL and the log are written) and checks every mode while it
/// still runs.
fn run_and_check(dir: tempfile::TempDir, umask: u32, what: &str) -> tempfile::TempDir {
    let script = dir.path().join("script.json");
    let answer = raw(&response_packet(paragraph("Noted."), json!([]), json!([])));
    std::fs::write(&script, json!([answer]).to_string()).unwrap();
    let mut host = Host::launch_under_umask(
        Launch {
            env: vec![
                ("LAIKA_RUNTIME".into(), "scripted".into()),
                ("LAIKA_SCRIPT".into(), script.display().to_string()),
            ],
            dir: Some(dir),
            ..Launch::default()
        },
        umask,
    );
    let events = host.turn(
        "t1",
        json!({"name": "web.answer", "args": {}}),
        "Remember this",
        observation("article-night-trains.observation.json"),
    );
    assert_eq!(one(&events, "done")["status"], "ok", "{events:#?}");
    let data = host.dir.path().join("data");
    let mut modes = vec![("data".to_owned(), mode(&data))];
    modes.extend(FILES.iter().map(|f| ((*f).to_owned(), mode(&data.join(f)))));
    let want: Vec<(String, u32)> = std::iter::once(("data".to_owned(), 0o700))
        .chain(FILES.iter().map(|f| ((*f).to_owned(), 0o600)))
        .collect();
    assert_eq!(modes, want, "{what} under umask {umask:03o}");
    host.into_dir()
}

#[test]
fn a_fresh_data_directory_is_private_under_any_umask() {
    for umask in [0o022, 0o000] {
        run_and_check(tempfile::tempdir().unwrap(), umask, "fresh");
    }
}

#[test]
fn an_open_data_directory_is_tightened_on_upgrade() {
    for umask in [0o022, 0o000] {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        // What an older version left: a 0755 directory with 0644 files.
        std::fs::create_dir(&data).unwrap();
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
        for file in FILES {
            std::fs::write(data.join(file), "").unwrap();
            std::fs::set_permissions(data.join(file), std::fs::Permissions::from_mode(0o644))
                .unwrap();
        }
        let dir = run_and_check(dir, umask, "upgraded");
        // And again on a later start, once it has been used.
        for file in FILES
            .iter()
            .filter(|f| dir.path().join("data").join(f).exists())
        {
            std::fs::set_permissions(
                dir.path().join("data").join(file),
                std::fs::Permissions::from_mode(0o644),
            )
            .unwrap();
        }
        run_and_check(dir, umask, "reopened");
    }
}
