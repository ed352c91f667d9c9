//! Coded errors shared by the wire protocol, the CLI and (later) the HTTP
//! surface.
//!
//! Every failure a user or the extension can see is an [`Error`]: a stable
//! machine-readable [`ErrorCode`] plus a message that says what went wrong and,
//! where possible, what to do about it.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// Stable error codes. Their `SCREAMING_SNAKE_CASE` spelling is part of the
/// wire protocol and must never change once released.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// A frame's declared length is above the inbound limit.
    FrameTooLarge,
    /// The stream ended inside a frame header or body.
    FrameTruncated,
    /// A frame body is not valid UTF-8.
    InvalidUtf8,
    /// A frame body is not JSON.
    InvalidJson,
    /// A frame body nests deeper than the configured limit.
    JsonTooDeep,
    /// The message is JSON but not a valid request (shape, fields, values).
    InvalidRequest,
    /// The message asks for a protocol version this host does not speak.
    UnsupportedVersion,
    /// The caller's origin is not in the allow-list.
    OriginDenied,
    /// The observation does not match its document schema.
    InvalidObservation,
    /// The runtime could not be reached.
    RuntimeUnavailable,
    /// The runtime did not answer in time.
    RuntimeTimeout,
    /// The runtime answered with an error of its own.
    RuntimeError,
    /// The model's output could not be parsed or validated, even after retries.
    InvalidModelOutput,
    /// A tool call was refused by the Policy Gate.
    PolicyDenied,
    /// A `tool_result` or `approval` names a call nobody waits on (it ended,
    /// timed out, or never existed).
    UnknownCall,
    /// An `approval` whose digest is not that of the call waiting for it.
    ApprovalMismatch,
    /// An `approval` that came after the call's approval expired.
    ApprovalExpired,
    /// Reading or writing the SQLite store failed.
    StoreFailed,
    /// The named conversation, message or key does not exist.
    NotFound,
    /// The operation was cancelled by the user.
    Cancelled,
    /// The configuration file or an environment override is invalid.
    ConfigInvalid,
    /// A PDF over the size or page cap (`pdf.read`).
    PdfTooLarge,
    /// A PDF that could not be parsed: malformed, truncated, or it made the
    /// parser fail or run out of memory.
    PdfUnreadable,
    /// A PDF whose text took longer than the time cap to read.
    PdfTimeout,
    /// A PDF that needs a password to open.
    PdfEncrypted,
    /// A PDF without a text layer (scanned pages): there is nothing to read
    /// without OCR.
    PdfNoText,
    /// A saved prompt with an empty or too long name or text, an unknown
    /// task or a shortcut slot out of range (`prompts.save`).
    PromptInvalid,
    /// Another saved prompt already has that name (`prompts.save`).
    PromptNameTaken,
    /// A bug in the host. The message says where.
    Internal,
}

impl ErrorCode {
    /// The wire spelling, e.g. `FRAME_TOO_LARGE`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::FrameTooLarge => "FRAME_TOO_LARGE",
            ErrorCode::FrameTruncated => "FRAME_TRUNCATED",
            ErrorCode::InvalidUtf8 => "INVALID_UTF8",
            ErrorCode::InvalidJson => "INVALID_JSON",
            ErrorCode::JsonTooDeep => "JSON_TOO_DEEP",
            ErrorCode::InvalidRequest => "INVALID_REQUEST",
            ErrorCode::UnsupportedVersion => "UNSUPPORTED_VERSION",
            ErrorCode::OriginDenied => "ORIGIN_DENIED",
            ErrorCode::InvalidObservation => "INVALID_OBSERVATION",
            ErrorCode::RuntimeUnavailable => "RUNTIME_UNAVAILABLE",
            ErrorCode::RuntimeTimeout => "RUNTIME_TIMEOUT",
            ErrorCode::RuntimeError => "RUNTIME_ERROR",
            ErrorCode::InvalidModelOutput => "INVALID_MODEL_OUTPUT",
            ErrorCode::PolicyDenied => "POLICY_DENIED",
            ErrorCode::UnknownCall => "UNKNOWN_CALL",
            ErrorCode::ApprovalMismatch => "APPROVAL_MISMATCH",
            ErrorCode::ApprovalExpired => "APPROVAL_EXPIRED",
            ErrorCode::StoreFailed => "STORE_FAILED",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::ConfigInvalid => "CONFIG_INVALID",
            ErrorCode::PdfTooLarge => "PDF_TOO_LARGE",
            ErrorCode::PdfUnreadable => "PDF_UNREADABLE",
            ErrorCode::PdfTimeout => "PDF_TIMEOUT",
            ErrorCode::PdfEncrypted => "PDF_ENCRYPTED",
            ErrorCode::PdfNoText => "PDF_NO_TEXT",
            ErrorCode::PromptInvalid => "PROMPT_INVALID",
            ErrorCode::PromptNameTaken => "PROMPT_NAME_TAKEN",
            ErrorCode::Internal => "INTERNAL",
        }
    }

    /// Whether retrying the same request later may succeed.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ErrorCode::RuntimeUnavailable
                | ErrorCode::RuntimeTimeout
                | ErrorCode::RuntimeError
                | ErrorCode::InvalidModelOutput
                | ErrorCode::StoreFailed
        )
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A coded error with a human message, and the lower-level error it came
/// from (SQLite, HTTP, I/O) for the logs. The wire shows the code and the
/// message only; two errors are equal when those are.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{code}: {message}")]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
    #[source]
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code && self.message == other.message
    }
}

impl Eq for Error {}

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            source: None,
        }
    }

    /// Keeps `source` in the chain that logs print (see [`Error::chain`]).
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// The message followed by every underlying cause, `": "`-separated: what
    /// the log file gets. A cause the message already quotes is not repeated.
    pub fn chain(&self) -> String {
        let mut out = self.to_string();
        let mut next = std::error::Error::source(self);
        while let Some(cause) = next {
            let text = cause.to_string();
            if !out.contains(&text) {
                out.push_str(": ");
                out.push_str(&text);
            }
            next = cause.source();
        }
        out
    }

    pub fn invalid_request(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidRequest, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::Internal, message)
    }

    /// The one way a cancelled turn is reported, wherever the cancel landed.
    pub fn cancelled() -> Self {
        Error::new(ErrorCode::Cancelled, "the turn was cancelled")
    }

    pub fn store(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::StoreFailed, message)
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_spelling_matches_serde() {
        for code in [
            ErrorCode::FrameTooLarge,
            ErrorCode::InvalidModelOutput,
            ErrorCode::RuntimeUnavailable,
            ErrorCode::Internal,
        ] {
            let json = serde_json::to_value(code).unwrap_or_default();
            assert_eq!(json, serde_json::Value::String(code.as_str().into()));
        }
    }

    #[test]
    fn display_names_code_and_message() {
        let e = Error::new(ErrorCode::NotFound, "no conversation c-1");
        assert_eq!(e.to_string(), "NOT_FOUND: no conversation c-1");
    }

    #[test]
    fn the_source_is_kept_for_logs_not_for_equality() {
        let io = std::io::Error::other("disk full");
        let e = Error::store("cannot commit the turn").with_source(io);
        assert_eq!(e.chain(), "STORE_FAILED: cannot commit the turn: disk full");
        assert_eq!(e, Error::store("cannot commit the turn"));
        assert!(std::error::Error::source(&e).is_some());
        let quoted = Error::store("commit failed: disk full")
            .with_source(std::io::Error::other("disk full"));
        assert_eq!(quoted.chain(), "STORE_FAILED: commit failed: disk full");
    }
}
