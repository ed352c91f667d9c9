//! The limits a turn and a connection work within (the `[limits]` table of
//! the config file).

use serde::{Deserialize, Serialize};

/// Browser → host frames above this are refused before allocating.
pub const DEFAULT_MAX_INBOUND_FRAME: usize = 64 << 20;
/// Deepest JSON nesting accepted in a frame.
pub const DEFAULT_MAX_JSON_DEPTH: usize = 64;
/// The range `max_json_depth` may be configured in: an object needs 2.
pub const MIN_JSON_DEPTH: usize = 2;
pub const MAX_JSON_DEPTH: usize = 512;
/// Most validation retries after the first attempt (CLAIJ seed).
pub const MAX_RETRIES: u32 = 3;

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
    pub max_tool_calls: usize,
    /// Validation retries after the first attempt.
    #[schemars(range(max = MAX_RETRIES))]
    pub max_retries: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_inbound_frame: DEFAULT_MAX_INBOUND_FRAME,
            max_json_depth: DEFAULT_MAX_JSON_DEPTH,
            context_max_chars: None,
            context_max_tokens: None,
            max_tool_calls: crate::gate::DEFAULT_MAX_CALLS_PER_TURN,
            max_retries: MAX_RETRIES,
        }
    }
}
