//! How much an answer may hold: the one table the answer schema is derived
//! from (`decoding::answer_schema`), per regime.
//!
//! - [`Regime::Full`], the default: caps a real answer needs (a ten-point
//!   summary, an extraction table, a handful of citations). A model that
//!   stops on its own is never cut by them; `max_tokens` is sized to hold
//!   such an answer ([`DEFAULT_MAX_TOKENS`]) and an answer cut at it anyway
//!   is closed at its last complete block, not thrown away.
//! - [`Regime::Small`], for models that cannot stop (a few hundred million
//!   parameters loop inside a grammar until the token limit): the structure
//!   grows from [`Caps::MIN`] only while the longest answer the grammar
//!   allows still fits `max_tokens`, so a constrained decoder must finish.
//!   Chosen from what the server says of the model ([`Regime::for_params`])
//!   or from the model's own record of answers cut at `max_tokens`
//!   ([`CutRecord`]).

use laika_protocol::llmcp::{MAX_FOLLOW_UPS, MAX_FOLLOW_UP_CHARS};
use laika_protocol::mode::{MAX_CHOICES, MAX_CHOICE_CHARS};

/// Which caps an answer gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Regime {
    #[default]
    Full,
    Small,
}

/// Models with fewer parameters than this get [`Regime::Small`]: below
/// about a billion, models loop inside a grammar instead of closing it.
pub const SMALL_MODEL_PARAMS: u64 = 1_000_000_000;

impl Regime {
    /// The regime for a model of `params` parameters (unknown: full).
    pub fn for_params(params: Option<u64>) -> Regime {
        match params {
            Some(n) if n < SMALL_MODEL_PARAMS => Regime::Small,
            _ => Regime::Full,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Regime::Full => "full",
            Regime::Small => "small",
        }
    }
}

/// The output budget when neither the user nor a known window sets one: a
/// full answer ([`Caps::FULL`] in use: 2,500+ characters of prose, a table,
/// citations) is about 7,000 characters of JSON, 2,300 tokens; this leaves
/// room to spare.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// How many of each part the answer may have, and how long its strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub blocks: usize,
    pub inlines: usize,
    pub list_items: usize,
    pub rows: usize,
    pub cells: usize,
    pub citations: usize,
    pub tool_calls: usize,
    /// A render `text` node of prose (and, at most, any other free string).
    pub text: usize,
    /// A table cell's or a link's text: a value or a name, not a sentence.
    pub label: usize,
    pub title: usize,
    pub quote: usize,
    pub memory: usize,
    pub arg_string: usize,
    pub href: usize,
    /// A clarifying question's choices, and the longest choice.
    pub choices: usize,
    pub choice: usize,
    /// Whether the answer may propose a plan: a plan is several model
    /// calls more, which a small model's tight output budget is not sized
    /// for, so the small regime leaves it out.
    pub plans: bool,
    /// A summary's suggested follow-up questions, and the longest one.
    pub follow_ups: usize,
    pub follow_up: usize,
}

/// Shortest and longest text a render `text` node may be given.
pub const MIN_TEXT: usize = 24;
pub const MAX_TEXT: usize = 600;
/// The longest title, quote, memory summary, tool argument and link.
const MAX_TITLE: usize = 120;
const MAX_QUOTE: usize = 200;
const MAX_MEMORY: usize = 600;
const MAX_ARG_STRING: usize = 256;
const MAX_HREF: usize = 300;
/// Shortest tool argument and link a small answer still gets.
const MIN_ARG_STRING: usize = 48;
/// The small regime's choices: three short replies.
const SMALL_CHOICES: usize = 3;
const SMALL_CHOICE: usize = 40;
/// The small regime's follow-up questions: one short one, and only once
/// the summary has two blocks and two citations ([`Caps::bigger`]): none
/// below about 1,500 output tokens.
const SMALL_FOLLOW_UPS: usize = 1;
const SMALL_FOLLOW_UP: usize = 80;
/// The small regime's longest title, quote and memory summary.
const SMALL_TITLE: usize = 80;
const SMALL_QUOTE: usize = 160;
const SMALL_MEMORY: usize = 300;
/// The small regime's longest label (table cell, link text), extracted
/// value or tool argument, and link: a value, a name or a URL, not prose;
/// kept short so that the budget goes to the answer's sentences.
const SMALL_LABEL: usize = 32;
const SMALL_ARG_STRING: usize = 64;
const SMALL_HREF: usize = 96;

impl Caps {
    /// A real answer: 16 blocks of up to 600 characters, lists of 12,
    /// paragraphs of 8 inline nodes (text and links), tables of 12 rows × 6
    /// cells, 8 citations.
    pub const FULL: Caps = Caps {
        blocks: 16,
        inlines: 8,
        list_items: 12,
        rows: 12,
        cells: 6,
        citations: 8,
        tool_calls: 4,
        text: MAX_TEXT,
        label: MAX_TEXT,
        title: MAX_TITLE,
        quote: MAX_QUOTE,
        memory: MAX_MEMORY,
        arg_string: MAX_ARG_STRING,
        href: MAX_HREF,
        choices: MAX_CHOICES,
        choice: MAX_CHOICE_CHARS,
        plans: true,
        follow_ups: MAX_FOLLOW_UPS,
        follow_up: MAX_FOLLOW_UP_CHARS,
    };

    /// The smallest structure: one block, a list of two, one citation.
    pub const MIN: Caps = Caps {
        blocks: 1,
        inlines: 1,
        list_items: 2,
        rows: 2,
        cells: 2,
        citations: 1,
        tool_calls: 1,
        text: MIN_TEXT,
        label: SMALL_LABEL,
        title: SMALL_TITLE,
        quote: SMALL_QUOTE,
        memory: SMALL_MEMORY,
        arg_string: SMALL_ARG_STRING,
        href: SMALL_HREF,
        choices: SMALL_CHOICES,
        choice: SMALL_CHOICE,
        plans: false,
        follow_ups: 0,
        follow_up: SMALL_FOLLOW_UP,
    };

    /// The strings' caps once texts are `text` long: none longer than a
    /// text node, links and tool arguments no shorter than a URL needs.
    pub fn with_text(self, text: usize) -> Caps {
        Caps {
            text,
            label: self.label.min(text),
            title: self.title.min(text),
            quote: self.quote.min(text),
            memory: self.memory.min(text),
            arg_string: self.arg_string.min(text.max(MIN_ARG_STRING)),
            href: self.href.min(text.max(MIN_ARG_STRING)),
            choice: self.choice.min(text),
            follow_up: self.follow_up.min(text),
            ..self
        }
    }

    /// One step bigger in the small regime, in the order an answer gains
    /// most from: more list items and blocks, a second citation, a
    /// summary's one follow-up question, wider tables, more tool calls;
    /// `None` at its largest structure.
    pub fn bigger(self) -> Option<Caps> {
        let c = self;
        let steps: [(bool, Caps); 10] = [
            (
                c.list_items < 5,
                Caps {
                    list_items: c.list_items + 1,
                    ..c
                },
            ),
            (c.blocks < 2, Caps { blocks: 2, ..c }),
            (c.citations < 2, Caps { citations: 2, ..c }),
            (
                c.follow_ups < SMALL_FOLLOW_UPS,
                Caps {
                    follow_ups: SMALL_FOLLOW_UPS,
                    ..c
                },
            ),
            (c.inlines < 2, Caps { inlines: 2, ..c }),
            (
                c.blocks < 4,
                Caps {
                    blocks: c.blocks + 1,
                    ..c
                },
            ),
            (
                c.list_items < 8,
                Caps {
                    list_items: c.list_items + 1,
                    ..c
                },
            ),
            (
                c.rows < 8,
                Caps {
                    rows: c.rows + 1,
                    ..c
                },
            ),
            (
                c.cells < 4,
                Caps {
                    cells: c.cells + 1,
                    ..c
                },
            ),
            (
                c.citations < 4 || c.tool_calls < 3 || c.blocks < 8,
                Caps {
                    citations: (c.citations + 1).min(4),
                    tool_calls: (c.tool_calls + 1).min(3),
                    blocks: (c.blocks + 1).min(8),
                    ..c
                },
            ),
        ];
        steps
            .into_iter()
            .find(|(room, _)| *room)
            .map(|(_, next)| next)
    }
}

/// A model's record of answers cut at `max_tokens`: the last
/// [`CutRecord::WINDOW`] answers, and whether each was cut. A model most of
/// whose recent answers were cut cannot stop on its own: it gets
/// [`Regime::Small`] until it answers whole again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CutRecord {
    recent: std::collections::VecDeque<bool>,
}

impl CutRecord {
    pub const WINDOW: usize = 4;
    /// Cut answers among the last [`CutRecord::WINDOW`] that switch the
    /// model to the small regime.
    pub const CUT_TO_SMALL: usize = 2;

    pub fn record(&mut self, cut: bool) {
        if self.recent.len() == Self::WINDOW {
            self.recent.pop_front();
        }
        self.recent.push_back(cut);
    }

    /// The small regime when the record says so; else `None` (the server's
    /// word, or the default, decides).
    pub fn regime(&self) -> Option<Regime> {
        let cut = self.recent.iter().filter(|c| **c).count();
        (cut >= Self::CUT_TO_SMALL).then_some(Regime::Small)
    }
}

/// The number of parameters a model's name states (`gemma-3-270m-it`,
/// `qwen2.5:0.5b`, `Llama-3.2-1B-Instruct-Q4_K_M.gguf`): a number followed
/// by `m` or `b` and not by another letter or digit. The last resort when
/// the server does not say.
pub fn params_from_name(name: &str) -> Option<u64> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let lower = base.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut found = None;
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric());
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < bytes.len() && (bytes[j].is_ascii_digit() || bytes[j] == b'.') {
            j += 1;
        }
        let unit = bytes.get(j).copied();
        let ends = bytes.get(j + 1).is_none_or(|b| !b.is_ascii_alphanumeric());
        let scale = match unit {
            Some(b'm') if ends => Some(1e6),
            Some(b'b') if ends => Some(1e9),
            _ => None,
        };
        if let (Some(scale), Ok(n)) = (scale, lower[i..j].parse::<f64>()) {
            // `8x7b`-style names multiply; the first stated size is enough
            // to tell small from not.
            found = Some((n * scale) as u64);
            break;
        }
        i = j.max(i + 1);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_read_from_names() {
        for (name, params) in [
            ("gemma-3-270m-it-Q4_K_M.gguf", Some(270_000_000)),
            ("/models/gemma-3-270m.gguf", Some(270_000_000)),
            ("qwen2.5:0.5b", Some(500_000_000)),
            ("Llama-3.2-1B-Instruct-Q4_K_M.gguf", Some(1_000_000_000)),
            ("Qwen/Qwen3-4B", Some(4_000_000_000)),
            ("qwen3:4b", Some(4_000_000_000)),
            ("gpt-4.1-mini", None),
            ("mistral-7b-v0.3", Some(7_000_000_000)),
            ("model-q4_k_m", None),
            ("", None),
        ] {
            assert_eq!(params_from_name(name), params, "{name}");
        }
        assert_eq!(Regime::for_params(Some(270_000_000)), Regime::Small);
        assert_eq!(Regime::for_params(Some(4_000_000_000)), Regime::Full);
        assert_eq!(Regime::for_params(None), Regime::Full);
    }

    #[test]
    fn a_record_of_cut_answers_switches_to_small_and_back() {
        let mut r = CutRecord::default();
        assert_eq!(r.regime(), None);
        r.record(true);
        assert_eq!(r.regime(), None, "one cut answer is not a habit");
        r.record(false);
        r.record(true);
        assert_eq!(r.regime(), Some(Regime::Small));
        for _ in 0..3 {
            r.record(false);
        }
        assert_eq!(r.regime(), None, "whole answers again: full again");
    }
}
