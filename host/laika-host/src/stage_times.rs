//! Timestamps of the stages a message passes on its way through the host
//! (frame read, handed to the session, the turn's reads, each event
//! written…), for `stream_bench` to split the host's time before the model.
//!
//! Off unless `LAIKA_STAGE_TIMES` names a file: then each [`mark`] keeps
//! its stage and the wall clock in memory, and [`write`] puts them in that
//! file when the host ends, one `<ns since the Unix epoch> <stage>` a line.
//! The wall clock, not a monotonic one, so that another process (the bench)
//! can set them beside its own. Off, a mark costs one atomic load.

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// The variable that turns the marks on and names their file.
pub const ENV: &str = "LAIKA_STAGE_TIMES";

struct Record {
    file: PathBuf,
    marks: Mutex<Vec<(u128, String)>>,
}

fn record() -> Option<&'static Record> {
    static RECORD: OnceLock<Option<Record>> = OnceLock::new();
    RECORD
        .get_or_init(|| {
            std::env::var_os(ENV).map(|file| Record {
                file: file.into(),
                marks: Mutex::new(Vec::new()),
            })
        })
        .as_ref()
}

/// Whether the marks are on: for a caller that must build a stage's name.
pub fn on() -> bool {
    record().is_some()
}

/// Notes that `stage` was reached now.
pub fn mark(stage: &str) {
    if let Some(record) = record() {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        if let Ok(mut marks) = record.marks.lock() {
            marks.push((now, stage.to_owned()));
        }
    }
}

/// Writes the marks kept so far to the file, when on.
pub fn write() {
    let Some(record) = record() else {
        return;
    };
    let marks = match record.marks.lock() {
        Ok(mut marks) => std::mem::take(&mut *marks),
        Err(_) => return,
    };
    let text: String = marks
        .iter()
        .map(|(ns, stage)| format!("{ns} {stage}\n"))
        .collect();
    if let Err(e) = std::fs::write(&record.file, text) {
        tracing::warn!(
            "cannot write the stage times to {}: {e}",
            record.file.display()
        );
    }
}
