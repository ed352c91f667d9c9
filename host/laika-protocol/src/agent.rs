//! The agent loop's vocabulary on the wire: how a tool call ended, the
//! states and operations the sidebar shows, why a loop stops, and the bounds
//! of the loop's configuration.
//!
//! The loop itself is the turn engine's (`laika_core::engine`); the pure
//! helpers it shares with the store (digests, result bounds, the wording of
//! operations) are `laika_core::agent`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most steps a turn may take: the configurable cap's upper bound.
pub const MAX_STEPS: u32 = 32;
/// The step cap when the config does not set one.
pub const DEFAULT_MAX_STEPS: u32 = 8;
/// How long an `ask` call waits for the user by default.
pub const DEFAULT_APPROVAL_TIMEOUT_SECS: u64 = 120;
/// How long a browser tool may take by default (navigation included).
pub const DEFAULT_TOOL_TIMEOUT_SECS: u64 = 60;
/// A whole turn's default time budget, model calls included.
pub const DEFAULT_TURN_BUDGET_SECS: u64 = 600;

/// Bytes of an error message or summary kept.
pub const MAX_MESSAGE_BYTES: usize = 500;
/// Bytes of an error code from the extension.
const MAX_CODE_BYTES: usize = 64;

/// How one tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolStatus {
    Ok,
    Error,
    /// The gate, the user or the extension refused it: it did not run.
    Denied,
    /// No result (or no approval) came in time.
    Timeout,
}

impl ToolStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolStatus::Ok => "ok",
            ToolStatus::Error => "error",
            ToolStatus::Denied => "denied",
            ToolStatus::Timeout => "timeout",
        }
    }
}

/// A tool call's error: a code (the host's, the gate's reason, or the
/// extension's) and a sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolError {
    #[schemars(length(min = 1, max = MAX_CODE_BYTES))]
    pub code: String,
    pub message: String,
}

impl ToolError {
    pub fn new(code: &str, message: impl Into<String>) -> ToolError {
        ToolError {
            code: code.to_owned(),
            message: message.into(),
        }
    }

    /// The same error with its code and message cut to size (they may come
    /// from the extension).
    pub fn bounded(self) -> ToolError {
        ToolError {
            code: self.code.chars().take(MAX_CODE_BYTES).collect(),
            message: self.message.chars().take(MAX_MESSAGE_BYTES).collect(),
        }
    }
}

/// Host error codes of tool results (beyond the gate's reasons and the
/// extension's own codes).
pub mod codes {
    /// The user denied the call.
    pub const USER_DENIED: &str = "USER_DENIED";
    /// Nobody approved or denied the call before its approval expired.
    pub const APPROVAL_EXPIRED: &str = "APPROVAL_EXPIRED";
    /// The extension did not report a result in time.
    pub const TOOL_TIMEOUT: &str = "TOOL_TIMEOUT";
    /// The user stopped the turn while the call was pending.
    pub const CANCELLED: &str = "CANCELLED";
    /// An earlier call of the same step did not succeed, so this one was
    /// not run (it may have depended on it).
    pub const NOT_RUN: &str = "NOT_RUN";
}

/// Where the agent is, as the sidebar shows it (docs/wire-protocol.md#agent_state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentState {
    /// The model is being asked.
    Thinking,
    /// A tool call is running.
    Executing,
    /// An `ask` call waits for the user.
    WaitingForApproval,
    /// The loop is over; `done` follows.
    Done,
}

/// A human-readable operation's progress (docs/wire-protocol.md#operation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OperationStatus {
    Start,
    Success,
    Error,
}

/// What an operation does to the page, for its icon and wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OperationAction {
    Read,
    Click,
    Type,
    Select,
    Scroll,
    Navigate,
    Search,
    Calculate,
    Other,
}

/// Why an agent loop stopped: a code in `done`, told to the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without tool calls.
    Answered,
    /// The step cap was reached.
    StepCap,
    /// The model proposed the same call again on an unchanged page.
    LoopDetected,
    /// The turn's time budget ran out.
    TimeBudget,
    /// The user stopped it.
    Cancelled,
    /// A step failed (the `error` event says why).
    Failed,
}
