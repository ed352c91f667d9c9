//! The context assembly of a follow-up on a long page, pinned: which
//! passages are chosen, what `context_usage` says and the exact bytes of the
//! user prompt, for fixed pages, questions and budgets. Assembly is tuned
//! for speed (`examples/memory_bench.rs`); these pins fail if a change to
//! it changes what a model is sent.

// Its helpers build fixtures and may unwrap like its tests (clippy exempts
// only `#[test]` functions and `#[cfg(test)]` modules).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use laika_core::ambient::Fixed;
use laika_core::pack::{self, Budget, PackInput, Packed};
use laika_core::select::{PageIndex, PageIndexes};
use laika_protocol::conversation::{History, PastTurn, StoredSummary};
use laika_protocol::limits::Limits;
use laika_protocol::llmcp::{PageRef, Task, TaskName};
use laika_protocol::observation::Observation;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

/// Words of several scripts and shapes: plain, accented, CJK, numbers,
/// words with JSON escapes (quotes, backslashes, tabs, control chars).
const WORDS: &[&str] = &[
    "council",
    "bridge",
    "budget",
    "harbour",
    "contract",
    "costs",
    "tender",
    "delays",
    "ferry",
    "timetable",
    "café",
    "straße",
    "naïve",
    "東京",
    "😀",
    "\"quoted\"",
    "back\\slash",
    "tab\there",
    "bell\u{7}",
    "48.5",
    "1,299",
    "€12",
    "it's",
    "the",
    "and",
    "of",
    "museum",
    "river",
    "school",
    "vote",
];

/// A deterministic stream of numbers (a linear congruential generator).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % below
    }
}

/// `chars` characters of lines of 5–25 words, some lines very long (over
/// the passage limit, cut on white space).
fn text(chars: usize, rng: &mut Lcg) -> String {
    let mut out = String::new();
    while out.chars().count() < chars {
        let words = if rng.next(40) == 0 {
            400
        } else {
            5 + rng.next(20)
        };
        for w in 0..words {
            if w > 0 {
                out.push(' ');
            }
            out.push_str(WORDS[rng.next(WORDS.len())]);
        }
        out.push_str(".\n");
    }
    let end = out.char_indices().nth(chars).map_or(out.len(), |(i, _)| i);
    out.truncate(end);
    out
}

/// A page in the extension's shape: a head of 3,000 chars and chunks of
/// about 2,000 chars, with facts placed deep in it and a URL with
/// credentials in one chunk.
fn page() -> Observation {
    let mut rng = Lcg(9);
    let head = text(3_000, &mut rng);
    let mut chunks: Vec<String> = (0..120).map(|_| text(2_000, &mut rng)).collect();
    chunks[97]
        .push_str("\nThe harbour bridge contract will cost 48 million euros, signed in March.");
    chunks[41].push_str("\nThe ferry timetable changes on 1 June; see https://user:pw@example.org/t?token=s3cret&q=1 .");
    chunks[110].push_str("\n東京の橋の予算は12億円です。");
    let n = chunks.len();
    Observation::from_value(json!({
        "summary": {"doc_type": "web.observation.summary.v1", "url": "https://example.org/minutes?session=abc", "title": "Council \"minutes\"", "text": head},
        "chunks": chunks.iter().enumerate().map(|(i, c)| json!({
            "doc_type": "web.observation.chunk.v1", "url": "https://example.org/minutes?session=abc", "title": "Council \"minutes\"",
            "chunk_index": i + 1, "chunk_count": n, "text": c
        })).collect::<Vec<_>>()
    }))
    .unwrap()
}

fn history() -> History {
    let mut rng = Lcg(3);
    History {
        turns: (1..=12)
            .map(|i| PastTurn {
                turn: i,
                task: "web.answer".into(),
                user_text: text(120, &mut rng),
                answer_text: text(900, &mut rng),
                status: "ok".into(),
                page: Some(PageRef {
                    url: "https://example.org/minutes".into(),
                    title: "Council minutes".into(),
                }),
                tools: Vec::new(),
            })
            .collect(),
        summary: Some(StoredSummary {
            version: 1,
            through_turn: 4,
            text: text(1_500, &mut rng),
        }),
        memory: Some("The user lives in Hamburg.".into()),
        pages: vec![PageRef {
            url: "https://example.org/minutes".into(),
            title: "Council minutes".into(),
        }],
        agent_state: None,
    }
}

/// One index kept, and how often one was built.
#[derive(Debug, Default)]
struct Kept(Mutex<(Option<Arc<PageIndex>>, usize)>);

impl PageIndexes for Kept {
    fn find(&self, chunks: &[(usize, &str)]) -> Option<Arc<PageIndex>> {
        let kept = self.0.lock().unwrap();
        kept.0.clone().filter(|i| i.is_of(chunks))
    }
    fn keep(&self, index: Arc<PageIndex>) {
        let mut kept = self.0.lock().unwrap();
        *kept = (Some(index), kept.1 + 1);
    }
}

fn packed(
    obs: &Observation,
    history: &History,
    question: &str,
    budget: Budget,
    indexes: Option<&dyn PageIndexes>,
) -> (Packed, String) {
    let ambient = Fixed::new();
    let task = Task {
        name: TaskName::Answer,
        args: Default::default(),
    };
    let packed = pack::pack_with(
        &PackInput {
            conversation_id: &"c".into(),
            turn: 13,
            user_message_id: "u",
            user_text: question,
            task: &task,
            observation: Some(obs),
            browser: "chrome",
            tab_id: Some("3".into()),
            history: Some(history),
            recent_turns: 8,
            ambient: &ambient,
            for_model: true,
        },
        budget,
        indexes,
    );
    let prompt = laika_core::prompt::user_prompt(&packed.packet);
    (packed, prompt)
}

/// FNV-1a: a pin of the prompt's exact bytes.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What a pin compares: the selection, the usage and the prompt.
fn pin(p: &Packed, prompt: &str) -> Value {
    let sel = p.usage.selection.as_ref();
    json!({
        "chunks": sel.map(|s| s.chunks.clone()),
        "about": sel.map(|s| s.about.clone()),
        "passages": sel.map(|s| [s.passages_sent, s.passages_total]),
        "chars": sel.map(|s| [s.sent_chars, s.page_chars]),
        "used": p.usage.used.chars,
        "documents": p.usage.documents.iter().filter(|d| d.included).count(),
        "cut": p.usage.cut.len(),
        "cut_chars": p.usage.cut.iter().map(|c| c.chars_removed).sum::<usize>(),
        "redacted": p.usage.redacted_strings,
        "prompt_len": prompt.len(),
        "prompt_fnv": format!("{:016x}", fnv1a(prompt.as_bytes())),
    })
}

#[test]
fn a_follow_ups_packed_prompt_is_pinned() {
    let obs = page();
    let history = history();
    let limits = Limits::default();
    let window = Budget::for_window(8_192, 2_048, 10_000, &limits);
    let fixed = Budget::for_runtime("openai", &limits);
    let cases = [
        (
            "How much will the harbour bridge contract cost?",
            window,
            json!({"about":["harbour","bridge","contract","cost"],"chars":[4127,243160],"chunks":[14,19,36,93],"cut":117,"cut_chars":264072,"documents":6,"passages":[4,346],"prompt_fnv":"e1e38f8f19b7eb38","prompt_len":8983,"redacted":122,"used":7503}),
        ),
        (
            "When does the ferry timetable change?",
            fixed,
            json!({"about":["ferry","timetable","change"],"chars":[62141,243160],"chunks":[1,2,4,6,7,10,12,14,15,16,22,23,24,25,26,27,28,30,31,32,33,35,38,39,40,42,43,44,46,48,51,52,53,58,61,63,67,68,69,70,71,75,76,83,84,86,88,90,93,94,95,96,97,100,102,103,104,105,107,108,109,110,111,112,114,116,120],"cut":53,"cut_chars":119833,"documents":69,"passages":[76,346],"prompt_fnv":"2b1d78fcfd8d7b36","prompt_len":100786,"redacted":122,"used":86595}),
        ),
        (
            "東京の橋の予算は？",
            window,
            json!({"about":["東京の橋の予算は"],"chars":[3904,243160],"chunks":[22,28,48,72,111],"cut":116,"cut_chars":261777,"documents":7,"passages":[5,346],"prompt_fnv":"7d0bf19d83bf8a47","prompt_len":8307,"redacted":122,"used":6671}),
        ),
        (
            "When was the bridge contract signed?",
            window,
            json!({"about":["bridge","contract","signed"],"chars":[3920,243160],"chunks":[14,30,81,93,98],"cut":116,"cut_chars":261709,"documents":7,"passages":[5,346],"prompt_fnv":"b5b0d9a5fef207f1","prompt_len":8235,"redacted":122,"used":6697}),
        ),
        (
            "zzz qqq",
            window,
            json!({"about":[],"chars":[4331,243160],"chunks":[1,2,3],"cut":118,"cut_chars":266211,"documents":5,"passages":[5,346],"prompt_fnv":"30c6da2a139a1a3f","prompt_len":8910,"redacted":122,"used":7606}),
        ),
    ];
    let kept = Kept::default();
    for (question, budget, expected) in cases {
        let (fresh, prompt) = packed(&obs, &history, question, budget, None);
        assert_eq!(pin(&fresh, &prompt), expected, "{question}");
        // A kept index chooses exactly as a new one.
        let (again, prompt_again) = packed(&obs, &history, question, budget, Some(&kept));
        assert_eq!(prompt_again, prompt, "{question}");
        assert_eq!(again.usage, fresh.usage, "{question}");
    }
    assert_eq!(kept.0.lock().unwrap().1, 1, "the index was built once");
    // The fact only chunk 98 has is sent for its question, and
    // credentials never reach the prompt, chosen or not.
    let (_, prompt) = packed(
        &obs,
        &history,
        "When was the bridge contract signed?",
        window,
        None,
    );
    assert!(prompt.contains("signed in March"));
    let (_, prompt) = packed(&obs, &history, "ferry timetable 1 June", window, None);
    assert!(prompt.contains("ferry timetable changes on 1 June"));
    assert!(
        !prompt.contains("s3cret") && !prompt.contains("pw@") && !prompt.contains("session=abc")
    );
}
