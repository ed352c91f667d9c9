//! The data directory and what it holds (the history database, its WAL and
//! shared-memory files, the log) are their owner's alone: the directory
//! 0700, the files 0600 (on Unix). They are created with those modes, so
//! no umask leaves them readable even for a moment, and a directory or file
//! an older version left more open is tightened when it is next opened.
//! Only group and other bits are ever removed.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// The data directory's mode.
pub const DIR_MODE: u32 = 0o700;
/// The mode of every file of the history and the log.
pub const FILE_MODE: u32 = 0o600;

/// Creates `dir` (and its missing parents) as 0700, or tightens it.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, DIR_MODE);
    builder.create(dir)?;
    tighten(dir, DIR_MODE)
}

/// Opens `path` to append to it, created as 0600 or tightened.
pub fn append_private(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    open_private(&options, path)
}

/// Makes sure `path` exists as 0600: created empty (nothing is written to
/// it here) or tightened.
pub fn touch_private(path: &Path) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.create(true).write(true);
    open_private(&options, path).map(drop)
}

/// Tightens `path` to 0600 if it exists.
pub fn tighten_if_present(path: &Path) -> io::Result<()> {
    match tighten(path, FILE_MODE) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

fn open_private(options: &OpenOptions, path: &Path) -> io::Result<File> {
    let mut options = options.clone();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, FILE_MODE);
    let file = options.open(path)?;
    tighten(path, FILE_MODE)?;
    Ok(file)
}

/// Removes from `path`'s mode the group and other bits `mode` lacks.
#[cfg(unix)]
fn tighten(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let current = std::fs::metadata(path)?.permissions().mode() & 0o777;
    if current & !mode != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(current & mode))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn tighten(path: &Path, _mode: u32) -> io::Result<()> {
    std::fs::metadata(path).map(drop)
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn open_modes_are_tightened_and_content_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("data");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let log = dir.join("laika-host.log");
        std::fs::write(&log, "old line\n").unwrap();
        std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
        private_dir(&dir).unwrap();
        drop(append_private(&log).unwrap());
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&log), 0o600);
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "old line\n");
        tighten_if_present(&dir.join("missing")).unwrap();
        // Owner bits are never added: a read-only file stays read-only.
        let ro = dir.join("ro");
        std::fs::write(&ro, "").unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
        tighten_if_present(&ro).unwrap();
        assert_eq!(mode(&ro), 0o400);
    }
}
