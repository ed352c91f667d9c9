//! Reading a PDF in a child process: the parser runs in `laika-host
//! pdf-text` (this same binary), with a memory limit it sets on itself, and
//! is killed at the deadline. A hostile file can then only end that child
//! (a hang, a decompression bomb, an abort), never the session; each way it
//! ends is a coded error.
//!
//! The child reads the PDF on stdin and writes one JSON [`Reply`] on stdout.

use super::extract::{self, PageText};
use laika_protocol::error::{Error, ErrorCode, Result};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// The child's address-space limit: far above what a large text PDF
/// needs, far below what would hurt the machine.
#[cfg(target_os = "linux")]
const CHILD_MEMORY_BYTES: u64 = 1 << 30;
/// How often the parent looks whether the child has ended.
const POLL: Duration = Duration::from_millis(10);

/// What the child answers.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Reply {
    Pages(Vec<PageText>),
    Error { code: ErrorCode, message: String },
}

impl Reply {
    fn error(e: &Error) -> Reply {
        Reply::Error {
            code: e.code,
            message: e.message.clone(),
        }
    }
}

/// How the parent bounds one read.
#[derive(Debug, Clone)]
pub struct Bounds {
    pub max_bytes: usize,
    pub max_pages: usize,
    pub timeout: Duration,
    /// The most the child may write (the pages' text as JSON).
    pub max_output: usize,
}

/// `laika-host pdf-text`: the child's side.
pub fn child_main(max_bytes: usize, max_pages: usize, cpu_seconds: u64) -> ExitCode {
    limit_self(cpu_seconds);
    let mut bytes = Vec::new();
    let reply = match std::io::stdin()
        .take(max_bytes as u64 + 1)
        .read_to_end(&mut bytes)
    {
        Err(e) => Reply::error(&Error::new(
            ErrorCode::PdfUnreadable,
            format!("the PDF could not be read from the host: {e}"),
        )),
        Ok(_) if bytes.len() > max_bytes => Reply::error(&too_large(max_bytes)),
        Ok(_) => match extract::pages(&bytes, max_pages) {
            Ok(pages) => Reply::Pages(pages),
            Err(e) => Reply::error(&e),
        },
    };
    let mut out = std::io::stdout().lock();
    let written = serde_json::to_writer(&mut out, &reply).is_ok() && out.flush().is_ok();
    if written {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Caps this process's memory and CPU time; a child that cannot set them
/// still runs under the parent's deadline.
fn limit_self(cpu_seconds: u64) {
    #[cfg(unix)]
    {
        use rustix::process::{setrlimit, Resource, Rlimit};
        let cpu = Rlimit {
            current: Some(cpu_seconds),
            maximum: Some(cpu_seconds + 1),
        };
        if let Err(e) = setrlimit(Resource::Cpu, cpu) {
            tracing::warn!(error = %e, "pdf-text: no CPU limit");
        }
        #[cfg(target_os = "linux")]
        {
            let memory = Rlimit {
                current: Some(CHILD_MEMORY_BYTES),
                maximum: Some(CHILD_MEMORY_BYTES),
            };
            if let Err(e) = setrlimit(Resource::As, memory) {
                tracing::warn!(error = %e, "pdf-text: no memory limit");
            }
        }
    }
    #[cfg(not(unix))]
    let _ = cpu_seconds;
}

pub fn too_large(max_bytes: usize) -> Error {
    Error::new(
        ErrorCode::PdfTooLarge,
        format!(
            "this PDF is larger than {} MiB, the most Laika reads",
            max_bytes >> 20
        ),
    )
}

/// Reads `bytes` with `program pdf-text` under `bounds`.
pub fn pages(program: &Path, bytes: Vec<u8>, bounds: &Bounds) -> Result<Vec<PageText>> {
    let cpu_seconds = bounds.timeout.as_secs().max(1);
    let mut child = Command::new(program)
        .arg("pdf-text")
        .arg(format!("--max-bytes={}", bounds.max_bytes))
        .arg(format!("--max-pages={}", bounds.max_pages))
        .arg(format!("--cpu-seconds={cpu_seconds}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| {
            Error::new(
                ErrorCode::Internal,
                format!("the PDF reader could not be started: {e}"),
            )
        })?;
    let started = Instant::now();
    // The child may end before it read everything (a bad header): a
    // broken pipe then is not an error of ours.
    let writer = child.stdin.take().map(|mut stdin| {
        std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        })
    });
    let max_output = bounds.max_output;
    let reader = child.stdout.take().map(|stdout| {
        std::thread::spawn(move || {
            let mut out = Vec::new();
            let read = stdout.take(max_output as u64 + 1).read_to_end(&mut out);
            read.map(|_| out)
        })
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= bounds.timeout => break None,
            Ok(None) => std::thread::sleep(POLL),
            Err(_) => break None,
        }
    };
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        join(writer);
        return Err(Error::new(
            ErrorCode::PdfTimeout,
            format!(
                "reading this PDF took longer than {} s: Laika stopped",
                bounds.timeout.as_secs()
            ),
        ));
    };
    join(writer);
    let out = reader
        .and_then(|r| r.join().ok())
        .and_then(|r| r.ok())
        .unwrap_or_default();
    if out.len() > max_output {
        return Err(Error::new(
            ErrorCode::PdfTooLarge,
            format!(
                "this PDF's text is over {} MiB, the most Laika reads",
                max_output >> 20
            ),
        ));
    }
    match serde_json::from_slice::<Reply>(&out) {
        Ok(Reply::Pages(pages)) => Ok(pages),
        Ok(Reply::Error { code, message }) => Err(Error::new(code, message)),
        Err(_) => Err(Error::new(
            ErrorCode::PdfUnreadable,
            format!("the PDF made the reader fail ({status}): it may be damaged or hostile"),
        )),
    }
}

fn join(handle: Option<std::thread::JoinHandle<()>>) {
    if let Some(h) = handle {
        let _ = h.join();
    }
}
