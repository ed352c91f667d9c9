//! The builtin runtime's question sets (`tests/builtin-eval/*.json`, scored
//! by `scripts/eval-builtin.sh`) hold against the article corpus: every id
//! names exactly one page, every accepted answer and extraction value is a
//! verbatim substring of that page's article text, every answerable question
//! has a known kind, and no two sets share a page (a held-out set that
//! shares one is not held out). Nothing here runs the runtime.
//!
//! The corpus is found at `$LAIKA_CORPORA`, else
//! `<CARGO_MANIFEST_DIR>/../../../shared/corpora`; when missing the corpus
//! test skips unless `LAIKA_REQUIRE_CORPORA=1`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const SETS: &[&str] = &[
    "questions.json",
    "questions-unseen.json",
    "extraction-dev.json",
    "questions-blind.json",
    "questions-blind2.json",
    "offline-dev.json",
    "offline-heldout.json",
];
/// The sets written blind, on pages nobody worked on for any task.
const BLIND: &[&str] = &[
    "questions-blind.json",
    "questions-blind2.json",
    "offline-heldout.json",
    "offline-fresh.json",
];
/// A fresh held-out slice written when the corpus had no unused page left:
/// new questions on the pages of a held-out set nobody tuned on. It may
/// share that set's pages and no other's.
const FRESH: &[(&str, &str)] = &[("offline-fresh.json", "questions-blind2.json")];
const KINDS: &[&str] = &[
    "lexical",
    "paraphrase",
    "numeric",
    "how-many",
    "how-much",
    "when",
    "who",
    "where",
    "what",
];

fn ground_truth() -> Option<Map<String, Value>> {
    let dir = std::env::var_os("LAIKA_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora"));
    let path = dir.join("article-extraction/ground-truth.json");
    if !path.is_file() {
        assert!(
            std::env::var("LAIKA_REQUIRE_CORPORA").as_deref() != Ok("1"),
            "corpus not found at {} and LAIKA_REQUIRE_CORPORA=1",
            path.display()
        );
        eprintln!("skipped: corpus not found at {}", path.display());
        return None;
    }
    Some(serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap())
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The pages a set uses, each with what it is used for: questions or
/// extraction. Two sets may use one page for different tasks (an
/// extraction dev set beside a question set), never for the same one.
type Pages = BTreeSet<(&'static str, String)>;

/// What is wrong with one question set, and the pages it uses.
fn check(name: &str, set: &Value, truth: &Map<String, Value>) -> (Vec<String>, Pages) {
    let mut problems = Vec::new();
    let mut pages = BTreeSet::new();
    let mut page =
        |task: &'static str, item: &Value, problems: &mut Vec<String>| -> Option<String> {
            let id = item["id"].as_str().unwrap_or("");
            let hits: Vec<&String> = truth
                .keys()
                .filter(|k| !id.is_empty() && k.starts_with(id))
                .collect();
            if let [key] = hits[..] {
                pages.insert((task, key.clone()));
                truth[key]["articleBody"].as_str().map(str::to_string)
            } else {
                problems.push(format!("{name}: id {id:?} names {} pages", hits.len()));
                None
            }
        };
    let verbatim = |text: &str, what: &str, accept: &[&str], problems: &mut Vec<String>| {
        if accept.is_empty() {
            problems.push(format!("{name}: {what:?}: no accepted value"));
        }
        for a in accept {
            if a.trim().is_empty() || !text.contains(a) {
                problems.push(format!("{name}: {what:?}: {a:?} is not in the page's text"));
            }
        }
    };
    for a in q_items(set, "answerable") {
        let q = a["q"].as_str().unwrap_or("");
        if !KINDS.contains(&a["kind"].as_str().unwrap_or("")) {
            problems.push(format!(
                "{name}: {q:?}: kind {} is not one of {KINDS:?}",
                a["kind"]
            ));
        }
        if let Some(text) = page("questions", a, &mut problems) {
            verbatim(&text, q, &strings(&a["accept"]), &mut problems);
        }
    }
    for u in q_items(set, "unanswerable") {
        page("questions", u, &mut problems);
    }
    for e in q_items(set, "extraction") {
        let Some(text) = page("extraction", e, &mut problems) else {
            continue;
        };
        let fields = e["fields"].as_object().cloned().unwrap_or_default();
        for (field, accept) in &fields {
            verbatim(&text, field, &strings(accept), &mut problems);
        }
        for field in strings(&e["absent"]) {
            if fields.contains_key(field) {
                problems.push(format!("{name}: {field:?} is both a field and absent"));
            }
        }
    }
    (problems, pages)
}

fn q_items<'a>(set: &'a Value, key: &str) -> &'a [Value] {
    set[key].as_array().map(Vec::as_slice).unwrap_or_default()
}

#[test]
fn every_set_holds_against_the_corpus_and_no_two_share_a_page() {
    let Some(truth) = ground_truth() else {
        return;
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/builtin-eval");
    let mut problems = Vec::new();
    let mut used: Vec<(&str, Pages)> = Vec::new();
    for name in SETS {
        let set: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap();
        assert!(
            !q_items(&set, "answerable").is_empty() || !q_items(&set, "extraction").is_empty(),
            "{name} has no answerable questions and no extraction cases"
        );
        let (p, pages) = check(name, &set, &truth);
        problems.extend(p);
        for (other, theirs) in &used {
            if FRESH.contains(&(name, other)) {
                continue;
            }
            for (task, shared) in pages.intersection(theirs) {
                problems.push(format!(
                    "{name} and {other} both use page {shared} for {task}"
                ));
            }
            // A blind set is on pages nobody worked on, for any task.
            if BLIND.contains(name) || BLIND.contains(other) {
                let keys = |p: &Pages| p.iter().map(|(_, k)| k.clone()).collect::<BTreeSet<_>>();
                for shared in keys(&pages).intersection(&keys(theirs)) {
                    problems.push(format!("{name} and {other} both use page {shared}"));
                }
            }
        }
        used.push((name, pages));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_check_finds_a_paraphrased_accept_an_ambiguous_id_and_an_unknown_kind() {
    let truth: Map<String, Value> = serde_json::from_value(json!({
        "aa11": {"articleBody": "The order is worth $8.8 billion."},
        "aa22": {"articleBody": "Another page."},
    }))
    .unwrap();
    let set = json!({
        "answerable": [
            {"id": "aa11", "kind": "how-much", "q": "Worth?", "accept": ["$8.8 billion"]},
            {"id": "aa11", "kind": "how-much", "q": "Value?", "accept": ["8.8 billion dollars"]},
            {"id": "aa", "kind": "who", "q": "Who?", "accept": ["x"]},
            {"id": "aa22", "kind": "numeric-ish", "q": "How?", "accept": ["Another"]},
        ],
        "extraction": [
            {"id": "aa11", "fields": {"value": ["$8.8 billion"], "buyer": []}, "absent": ["value"]},
        ],
    });
    let (problems, pages) = check("t", &set, &truth);
    assert_eq!(
        problems,
        [
            "t: \"Value?\": \"8.8 billion dollars\" is not in the page's text",
            "t: id \"aa\" names 2 pages",
            "t: \"How?\": kind \"numeric-ish\" is not one of [\"lexical\", \"paraphrase\", \"numeric\", \"how-many\", \"how-much\", \"when\", \"who\", \"where\", \"what\"]",
            "t: \"buyer\": no accepted value",
            "t: \"value\" is both a field and absent",
        ]
    );
    assert_eq!(
        pages.into_iter().collect::<Vec<_>>(),
        [
            ("extraction", "aa11".to_string()),
            ("questions", "aa11".to_string()),
            ("questions", "aa22".to_string())
        ]
    );
}
