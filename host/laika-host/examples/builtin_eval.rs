//! Scores the offline `builtin` runtime on a question set over real article
//! pages: answerable accuracy, honest abstains, extraction field accuracy,
//! and the precision of what it shows (answers that quote something, leads,
//! extraction values), with every citation checked against the packed
//! documents. Prints figures; asserts nothing. Run with
//! `bash scripts/eval-builtin.sh`.
//!
//! usage: builtin_eval QUESTIONS_JSON GROUND_TRUTH_JSON [--verbose | --totals]
//!
//! Misses are listed unless `--totals` is given (every answer with
//! `--verbose`): a blind set is scored on its totals only, so that nobody
//! tunes on what it misses.
//!
//! Each page becomes an observation the way the extension sends one (the
//! article body as `primary.text`, the same text with site chrome as
//! `text`), goes through `pack` like a real turn, and is answered by
//! `laika_builtin::respond`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use laika_core::ambient::Fixed;
use laika_core::cancel::CancelToken;
use laika_core::citation;
use laika_core::pack::{self, Budget, PackInput};
use laika_protocol::llmcp::{Citation, RequestPacket, Task, TaskName};
use laika_protocol::observation::Observation;
use serde_json::{json, Map, Value};

static AMBIENT: Fixed = Fixed::new();

fn body<'a>(truth: &'a Map<String, Value>, id: &str) -> (&'a str, &'a str) {
    let mut hits = truth.iter().filter(|(k, _)| k.starts_with(id));
    let (Some((_, v)), None) = (hits.next(), hits.next()) else {
        panic!("id {id} must name exactly one page");
    };
    (
        v["articleBody"].as_str().unwrap_or(""),
        v["url"].as_str().unwrap_or(""),
    )
}

fn observation(text: &str, url: &str) -> Value {
    // The URL's slug stands in for the page title.
    let slug = url.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    let title: Vec<&str> = slug
        .split(['-', '_', '.'])
        .filter(|w| {
            !w.is_empty() && !w.chars().any(|c| c.is_ascii_digit()) && *w != "html" && *w != "php"
        })
        .collect();
    let title = title.join(" ");
    json!({
        "summary": {
            "doc_type": "web.observation.summary.v1",
            "url": url,
            "title": title,
            "text": format!("Skip to content\nHome | News | Sport\nSign in\nH1: {title}\n{text}\nShare this article\nCookie settings\n© 2019 All rights reserved."),
            "primary": {"text": text, "handle_id": "laika-7", "tag": "article"},
        }
    })
}

/// Runs one task and returns the response and the packet it answered.
fn run(obs: &Value, task: TaskName, args: Value, message: &str) -> (Value, RequestPacket) {
    let task = Task {
        name: task,
        args: serde_json::from_value(args).unwrap_or_default(),
    };
    let o = Observation::from_value(obs.clone()).unwrap();
    let packed = pack::pack(
        &PackInput {
            conversation_id: &"c".into(),
            turn: 1,
            user_message_id: "u",
            user_text: message,
            task: &task,
            observation: Some(&o),
            browser: "chrome",
            tab_id: None,
            history: None,
            recent_turns: 0,
            ambient: &AMBIENT,
            for_model: true,
        },
        Budget::for_runtime("builtin", &Default::default()),
    );
    let v = laika_builtin::respond(&packed.packet, &AMBIENT, &CancelToken::default()).unwrap();
    (v, packed.packet)
}

fn citations(v: &Value) -> Vec<Citation> {
    serde_json::from_value(v["assistant"]["citations"].clone()).unwrap_or_default()
}

/// The text of every inline text node, in order, one per line.
fn render_text(v: &Value) -> String {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(o) if o.get("type") == Some(&json!("text")) => {
                out.extend(o.get("text").and_then(Value::as_str).map(str::to_string));
            }
            Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(&v["assistant"]["render"], &mut out);
    out.join("\n")
}

/// The bold lead line above the quotes: the paragraph right before the
/// first list, unless it only introduces them ("The page says:").
fn lead_line(v: &Value) -> Option<String> {
    let blocks = v["assistant"]["render"]["children"].as_array()?;
    let at = blocks.iter().position(|b| b["type"] == "list")?;
    let before = blocks.get(at.checked_sub(1)?)?;
    (before["type"] == "paragraph")
        .then(|| render_text(&json!({"assistant": {"render": before}})))
        .filter(|t| !t.trim_end().ends_with(':'))
}

fn holds(hay: &str, accept: &[String]) -> bool {
    let hay = hay.to_lowercase();
    accept.iter().any(|a| hay.contains(&a.to_lowercase()))
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn pct(n: usize, d: usize) -> String {
    format!("{n}/{d} = {:.1} %", 100.0 * n as f64 / d.max(1) as f64)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(qpath), Some(tpath)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: builtin_eval QUESTIONS_JSON GROUND_TRUTH_JSON [--verbose | --totals]");
        std::process::exit(2);
    };
    let verbose = args.iter().any(|a| a == "--verbose");
    let totals = args.iter().any(|a| a == "--totals");
    let show = |ok: bool| verbose || (!ok && !totals);
    let q: Value = serde_json::from_str(&std::fs::read_to_string(qpath).unwrap()).unwrap();
    let truth: Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(tpath).unwrap()).unwrap();

    let (mut cited, mut verified) = (0usize, 0usize);
    let mut check = |v: &Value, p: &RequestPacket| {
        let report = citation::verify(&citations(v), &p.context.documents);
        cited += report.total;
        verified += report.verified;
    };

    // Answerable: right when the first quoted passage holds an accepted
    // answer; "lead" also asks that the answer's opening line holds it.
    let answerable = q["answerable"].as_array().cloned().unwrap_or_default();
    let (mut right, mut lead) = (0usize, 0usize);
    // What it shows: answers that quote something, and leads above them.
    let (mut shown, mut shown_right, mut shown_right_any) = (0usize, 0usize, 0usize);
    let (mut leads, mut leads_right) = (0usize, 0usize);
    let mut by_kind: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for a in &answerable {
        let (text, url) = body(&truth, a["id"].as_str().unwrap_or(""));
        let question = a["q"].as_str().unwrap_or("");
        let accept = strings(&a["accept"]);
        let (v, p) = run(
            &observation(text, url),
            TaskName::Answer,
            json!({}),
            question,
        );
        check(&v, &p);
        // The first passage: the first list item (one to three quotes).
        let first = v["assistant"]["render"]["children"]
            .as_array()
            .and_then(|c| c.iter().find(|b| b["type"] == "list"))
            .map(|l| render_text(&json!({"assistant": {"render": l["items"][0]}})))
            .unwrap_or_default();
        let ok = holds(&first, &accept);
        let rendered = render_text(&v);
        let opening = rendered.lines().next().unwrap_or("");
        let lead_ok = ok && holds(opening, &accept);
        right += usize::from(ok);
        lead += usize::from(lead_ok);
        if !citations(&v).is_empty() {
            let shown_lead = lead_line(&v);
            let lead_fits = shown_lead.as_deref().is_none_or(|l| holds(l, &accept));
            let quotes = v["assistant"]["render"]["children"]
                .as_array()
                .and_then(|c| c.iter().find(|b| b["type"] == "list"))
                .map(|l| render_text(&json!({"assistant": {"render": l}})))
                .unwrap_or_default();
            shown += 1;
            shown_right += usize::from(ok && lead_fits);
            shown_right_any += usize::from(holds(&quotes, &accept) && lead_fits);
            if let Some(l) = &shown_lead {
                leads += 1;
                leads_right += usize::from(holds(l, &accept));
            }
        }
        let kind = by_kind
            .entry(a["kind"].as_str().unwrap_or("?").to_string())
            .or_default();
        kind.0 += usize::from(ok);
        kind.1 += 1;
        if show(ok) {
            println!(
                "{} answerable {}: {question} (want {accept:?})\n    {}",
                if ok { "ok  " } else { "MISS" },
                a["id"],
                rendered.replace('\n', "\n    ")
            );
        }
    }

    let unanswerable = q["unanswerable"].as_array().cloned().unwrap_or_default();
    let mut honest = 0usize;
    let (mut shown_wrong_unanswerable, mut leads_unanswerable) = (0usize, 0usize);
    for a in &unanswerable {
        let (text, url) = body(&truth, a["id"].as_str().unwrap_or(""));
        let question = a["q"].as_str().unwrap_or("");
        let (v, p) = run(
            &observation(text, url),
            TaskName::Answer,
            json!({}),
            question,
        );
        check(&v, &p);
        let ok = citations(&v).is_empty();
        honest += usize::from(ok);
        if !ok {
            shown_wrong_unanswerable += 1;
            leads_unanswerable += usize::from(lead_line(&v).is_some());
        }
        if show(ok) {
            println!(
                "{} unanswerable {}: {question}\n    {}",
                if ok { "ok  " } else { "MISS" },
                a["id"],
                render_text(&v).replace('\n', "\n    ")
            );
        }
    }

    // Extraction: a field is right when its value holds an accepted value
    // and is not much longer than it (a whole sentence is not a value); an
    // `absent` field (not on the page) is right when it comes back null.
    let (mut fields_ok, mut fields) = (0usize, 0usize);
    let (mut absent_ok, mut absent_n) = (0usize, 0usize);
    // Values shown (not null): right when they hold an accepted value.
    let (mut values_shown, mut values_right) = (0usize, 0usize);
    for e in q["extraction"].as_array().cloned().unwrap_or_default() {
        let (text, url) = body(&truth, e["id"].as_str().unwrap_or(""));
        let want = e["fields"].as_object().cloned().unwrap_or_default();
        let absent = strings(&e["absent"]);
        let names: Vec<&String> = want.keys().chain(&absent).collect();
        let (v, p) = run(
            &observation(text, url),
            TaskName::Extract,
            json!({ "fields": names }),
            "extract",
        );
        check(&v, &p);
        let data = &v["assistant"]["data"];
        for (name, accept) in &want {
            let accept = strings(accept);
            let got = data
                .get(name.as_str())
                .and_then(Value::as_str)
                .unwrap_or("");
            let longest = accept.iter().map(String::len).max().unwrap_or(0);
            let ok = holds(got, &accept) && got.len() <= 3 * longest + 20;
            fields += 1;
            fields_ok += usize::from(ok);
            values_shown += usize::from(!got.is_empty());
            values_right += usize::from(ok);
            if show(ok) {
                println!(
                    "{} extract {} {name:?}: got {got:?}, want {accept:?}",
                    if ok { "ok  " } else { "MISS" },
                    e["id"]
                );
            }
        }
        for name in &absent {
            let got = &data[name.as_str()];
            let ok = got.is_null();
            absent_n += 1;
            absent_ok += usize::from(ok);
            values_shown += usize::from(!ok);
            if show(ok) {
                println!(
                    "{} extract {} {name:?} (not on the page): got {got}",
                    if ok { "ok  " } else { "MISS" },
                    e["id"]
                );
            }
        }
    }

    println!();
    println!(
        "answerable (first passage): {}",
        pct(right, answerable.len())
    );
    println!(
        "answerable (answer leads):  {}",
        pct(lead, answerable.len())
    );
    for (kind, (ok, n)) in &by_kind {
        println!("  {kind:<11} {}", pct(*ok, *n));
    }
    println!(
        "honest abstains:            {}",
        pct(honest, unanswerable.len())
    );
    println!(
        "answers shown right:        {} (first passage; {} in any quoted passage), {} shown on {} unanswerable",
        pct(shown_right, shown),
        pct(shown_right_any, shown),
        shown_wrong_unanswerable,
        unanswerable.len()
    );
    println!(
        "leads shown right:          {} ({} more leads on unanswerable questions)",
        pct(leads_right, leads),
        leads_unanswerable
    );
    println!("extraction fields:          {}", pct(fields_ok, fields));
    println!(
        "extraction values shown right: {}",
        pct(values_right, values_shown)
    );
    if absent_n > 0 {
        println!("extraction absent (null):   {}", pct(absent_ok, absent_n));
    }
    println!("citations verified:         {}", pct(verified, cited));
}
