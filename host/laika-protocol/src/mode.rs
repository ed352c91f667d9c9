//! Conversation modes: whether the user wants to know something (`inform`),
//! wants something done (`act`), or has not said clearly enough (`clarify`,
//! answered with a question and a few choices to click). Only an `act`
//! turn's calls that change something run (docs/wire-protocol.md#modes).

use serde::{Deserialize, Serialize};

/// A turn's mode, as the user chose it or the model read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The request is ambiguous: ask before guessing.
    Clarify,
    /// The user wants knowledge or an explanation: nothing is changed.
    Inform,
    /// The user asked for something to be done: actions may be proposed.
    Act,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Clarify, Mode::Inform, Mode::Act];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Clarify => "clarify",
            Mode::Inform => "inform",
            Mode::Act => "act",
        }
    }
}

/// Fewest choices a clarifying question offers (fewer are not shown).
pub const MIN_CHOICES: usize = 2;
/// Most choices a clarifying question offers.
pub const MAX_CHOICES: usize = 5;
/// Longest choice, in characters: a short reply the user sends in a click.
pub const MAX_CHOICE_CHARS: usize = 80;
