//! The limits a turn and a connection work within (the `[limits]` table of
//! the config file).

use serde::{Deserialize, Serialize};

/// Browser → host frames above this are refused before allocating.
pub const DEFAULT_MAX_INBOUND_FRAME: usize = 64 << 20;
/// Deepest JSON nesting accepted in a frame.
pub const DEFAULT_MAX_JSON_DEPTH: usize = 64;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Browser → host frames above this are refused before allocating.
    pub max_inbound_frame: usize,
    pub max_json_depth: usize,
    /// Context budget for one request. `None` picks a default per runtime.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_max_chars: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_max_tokens: Option<usize>,
    pub max_tool_calls: usize,
    /// Validation retries after the first attempt (CLAIJ seed: at most 3).
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
            max_retries: 3,
        }
    }
}
