//! Log output with secrets scrubbed: every line the host logs (to stderr
//! and `laika-host.log`) goes through [`laika_core::redact::scrub_text`]
//! first, since errors may quote model output or a URL with a token in it.

use std::io::{self, Write};
use tracing_subscriber::fmt::MakeWriter;

/// A [`MakeWriter`] whose writers scrub what they are given.
pub struct Scrubbing<M>(pub M);

/// A writer that scrubs each write before passing it on. The fmt layer
/// writes one whole event per call, so a secret is never split across
/// writes.
pub struct Scrubbed<W>(W);

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

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for Scrubbing<M> {
    type Writer = Scrubbed<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        Scrubbed(self.0.make_writer())
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
