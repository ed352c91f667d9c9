//! The limits a turn and a connection work within (the `[limits]` table of
//! the config file).

use crate::agent;
use serde::{Deserialize, Serialize};

/// Browser → host frames above this are refused before allocating.
pub const DEFAULT_MAX_INBOUND_FRAME: usize = 64 << 20;
/// Deepest JSON nesting accepted in a frame.
pub const DEFAULT_MAX_JSON_DEPTH: usize = 64;
/// The range `max_json_depth` may be configured in: an object needs 2.
pub const MIN_JSON_DEPTH: usize = 2;
pub const MAX_JSON_DEPTH: usize = 512;
/// Most validation retries after the first attempt (docs/llmcp.md#validation-and-retry).
pub const MAX_RETRIES: u32 = 3;
/// Model calls in flight at once in a transform's parallel stage: a local
/// server usually serves a few slots; more only queue there.
pub const DEFAULT_TRANSFORM_CONCURRENCY: usize = 4;
pub const MAX_TRANSFORM_CONCURRENCY: usize = 32;
/// A turn planned to need more model calls than this asks the user first
/// (an `estimate`); a local model makes each call take seconds.
pub const DEFAULT_CONFIRM_CALLS: usize = 20;
/// The most `confirm_calls` may be configured to.
pub const MAX_CONFIRM_CALLS: usize = 100_000;
/// How many tool calls of one model answer are looked at; the rest are
/// refused in one result (`TOO_MANY_CALLS`) the model reads next step.
pub const DEFAULT_MAX_CALLS_PER_TURN: usize = 8;
/// The most `max_tool_calls` may be configured to.
pub const MAX_CALLS_PER_ANSWER: usize = 64;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Browser → host frames above this are refused before allocating.
    #[schemars(range(min = 1, max = DEFAULT_MAX_INBOUND_FRAME))]
    pub max_inbound_frame: usize,
    #[schemars(range(min = MIN_JSON_DEPTH, max = MAX_JSON_DEPTH))]
    pub max_json_depth: usize,
    /// Context budget for one request; when absent, each runtime has its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "usize", range(min = 1))]
    pub context_max_chars: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "usize", range(min = 1))]
    pub context_max_tokens: Option<usize>,
    /// The runtime's context window in tokens, when the server cannot be
    /// asked (or says wrong): the prompt and the answer must fit in it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "usize", range(min = 256))]
    pub context_window_tokens: Option<usize>,
    /// Earlier turns a follow-up carries verbatim; older ones only through
    /// the rolling summary.
    #[schemars(range(max = 64))]
    pub recent_turns: usize,
    /// A rolling summary is made once this many turns are not yet in one…
    #[schemars(range(min = 1))]
    pub summary_after_turns: usize,
    /// …or their text (questions and answers) exceeds this many chars.
    #[schemars(range(min = 1))]
    pub summary_after_chars: usize,
    /// Tool calls of one model answer that are looked at and may run.
    #[schemars(range(max = MAX_CALLS_PER_ANSWER))]
    pub max_tool_calls: usize,
    /// Validation retries after the first attempt.
    #[schemars(range(max = MAX_RETRIES))]
    pub max_retries: u32,
    /// Model calls one turn's agent loop may make.
    #[schemars(range(min = 1, max = agent::MAX_STEPS))]
    pub max_steps: u32,
    /// Seconds an `ask` call waits for the user before it expires.
    #[schemars(range(min = 1, max = 3600))]
    pub approval_timeout_secs: u64,
    /// Seconds a browser tool call may take before it counts as timed out.
    #[schemars(range(min = 1, max = 3600))]
    pub tool_timeout_secs: u64,
    /// Seconds one turn may take in all, model calls and waits included.
    #[schemars(range(min = 1, max = 86_400))]
    pub turn_budget_secs: u64,
    /// Model calls kept in flight at once: a transform's parallel stage, a
    /// staged summary's parts, a plan's parallel stage.
    #[schemars(range(min = 1, max = MAX_TRANSFORM_CONCURRENCY))]
    pub transform_concurrency: usize,
    /// Model calls a turn may plan without asking: above this, the user is
    /// shown an estimate and the turn waits for their answer.
    #[schemars(range(min = 1, max = MAX_CONFIRM_CALLS))]
    pub confirm_calls: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_inbound_frame: DEFAULT_MAX_INBOUND_FRAME,
            max_json_depth: DEFAULT_MAX_JSON_DEPTH,
            context_max_chars: None,
            context_max_tokens: None,
            context_window_tokens: None,
            recent_turns: crate::conversation::DEFAULT_RECENT_TURNS,
            summary_after_turns: crate::conversation::DEFAULT_SUMMARY_AFTER_TURNS,
            summary_after_chars: crate::conversation::DEFAULT_SUMMARY_AFTER_CHARS,
            max_tool_calls: DEFAULT_MAX_CALLS_PER_TURN,
            max_retries: MAX_RETRIES,
            max_steps: agent::DEFAULT_MAX_STEPS,
            approval_timeout_secs: agent::DEFAULT_APPROVAL_TIMEOUT_SECS,
            tool_timeout_secs: agent::DEFAULT_TOOL_TIMEOUT_SECS,
            turn_budget_secs: agent::DEFAULT_TURN_BUDGET_SECS,
            transform_concurrency: DEFAULT_TRANSFORM_CONCURRENCY,
            confirm_calls: DEFAULT_CONFIRM_CALLS,
        }
    }
}
