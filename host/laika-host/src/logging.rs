//! Log output with secrets scrubbed: every line the host logs (to stderr
//! and `laika-host.log`) goes through [`laika_core::redact::scrub_text`]
//! first, since errors may quote model output or a URL with a token in it.

use std::fs::File;
use std::io::{self, Write};

/// A writer that scrubs each write before passing it on. The fmt layer
/// writes one whole event per call and the non-blocking writer hands each
/// call on whole, so a secret is never split across two writes.
pub struct Scrubbed<W>(pub W);

impl<W: Write> Write for Scrubbed<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0
            .write_all(laika_core::redact::scrub_text(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Where log lines go: stderr, and the log file when it could be opened.
pub struct Sinks {
    pub file: Option<File>,
}

impl Write for Sinks {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // stderr may be closed by the browser; the file still gets the line.
        let to_stderr = io::stderr().write_all(buf);
        match &mut self.file {
            Some(f) => f.write_all(buf)?,
            None => to_stderr?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if let Some(f) = &mut self.file {
            f.flush()?;
        }
        io::stderr().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_reach_the_log() {
        let mut out = Vec::new();
        {
            let mut w = Scrubbed(&mut out);
            w.write_all(b"model said AKIAIOSFODNN7EXAMPLE at https://u:pw@x.example/\n")
                .unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert!(
            !text.contains("AKIAIOSFODNN7EXAMPLE") && !text.contains("u:pw"),
            "{text}"
        );
        assert!(
            text.contains("model said [redacted] at https://x.example/"),
            "{text}"
        );
    }
}
