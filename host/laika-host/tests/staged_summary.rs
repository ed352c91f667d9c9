//! `web.summarize` on a page far larger than the model's context window:
//! the page is read in parts, one model call each (several in flight),
//! then the turn's own call summarizes the parts' points
//! (`laika_core::staged`); above `limits.confirm_calls` calls the user is
//! asked first. The model is a loopback stub advertising an 8,192-token
//! window (llama.cpp `/props`) that answers each part with sentences it
//! finds in that part.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;
mod stub;

use common::{of_type, one, page_in_chunks, tokens_asked, turn_msg, Host, Launch};
use serde_json::{json, Value};
use std::time::Duration;
use stub::{sse_answer, status, Step, Stub};

const WINDOW: usize = 8_192;
/// Only in the last 10 % of the page.
const FACT: &str = "The harbour tunnel will open in March 2031 at a cost of 812 million kroner.";
/// Words the summary claims that are on no part of the page.
const INVENTED: &str = "The city abandoned every tunnel project in 1999.";

/// A 400,000-character page in the extension's shape: the opening in the
/// summary, the rest in 4,000-char chunks; [`FACT`] at 95 %.
fn long_page() -> Value {
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 400_000 {
        text.push_str(&format!(
            "Item {i}. The committee reviewed request {} and deferred it to the next session.\n",
            i * 7 % 1000
        ));
        i += 1;
        if text.len() > 380_000 && !text.contains(FACT) {
            text.push_str(FACT);
            text.push('\n');
        }
    }
    page_in_chunks("Committee minutes", &text, 6_000)
}

/// The request packet in a chat request body.
fn packet(body: &Value) -> Value {
    serde_json::from_str(body["messages"][1]["content"].as_str().unwrap_or("{}")).unwrap()
}

fn is_part(body: &Value) -> bool {
    packet(body)["input"]["user_message"]["text"]
        .as_str()
        .unwrap_or("")
        .starts_with("This is part")
}

fn is_merge(body: &Value) -> bool {
    packet(body)["input"]["user_message"]["text"]
        .as_str()
        .unwrap_or("")
        .starts_with("These are the key points")
}

fn paragraph(text: &str) -> Value {
    json!({"type": "paragraph", "children": [{"type": "text", "text": text}]})
}

fn response(p: &Value, children: Vec<Value>, citations: Value) -> String {
    json!({
        "protocol": {"name": "laika.llmcp", "version": 1},
        "id": "resp-1", "type": "response", "created_at": "2026-01-01T00:00:00.000Z",
        "conversation": p["conversation"], "sender": {"role": "assistant"},
        "in_reply_to": {"request_id": p["id"]},
        "assistant": {"title": "Summary", "render": {"type": "doc", "children": children}, "citations": citations},
        "tool_calls": []
    })
    .to_string()
}

/// The stub model: a part's points are any line about a tunnel, then the
/// first `extra` lines of its text; a combining call keeps the points about
/// a tunnel and the first point; the summary repeats the points about a
/// tunnel and cites one quote the page has and one it does not.
fn model_with(body: &Value, extra: usize) -> String {
    let p = packet(body);
    let docs = p["context"]["documents"].as_array().unwrap();
    if is_part(body) {
        let text: String = docs
            .iter()
            .filter_map(|d| d["content"]["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let mut points: Vec<&str> = text.lines().filter(|l| l.contains("tunnel")).collect();
        points.extend(text.lines().filter(|l| !l.trim().is_empty()).take(extra));
        return response(&p, points.iter().map(|l| paragraph(l)).collect(), json!([]));
    }
    if is_merge(body) {
        let all: Vec<&str> = docs
            .iter()
            .flat_map(|d| d["content"]["points"].as_array().into_iter().flatten())
            .filter_map(|x| x.as_str())
            .collect();
        let mut points: Vec<&str> = all
            .iter()
            .copied()
            .filter(|x| x.contains("tunnel"))
            .collect();
        points.extend(all.first());
        return response(&p, points.iter().map(|l| paragraph(l)).collect(), json!([]));
    }
    let found: Vec<(String, String)> = docs
        .iter()
        .filter(|d| d["kind"] == "web.observation.part.v1")
        .flat_map(|d| {
            let id = d["doc_id"].as_str().unwrap().to_owned();
            d["content"]["points"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| x.as_str())
                .filter(|x| x.contains("tunnel"))
                .map(move |x| (id.clone(), x.to_owned()))
        })
        .collect();
    let mut children = vec![paragraph(&format!(
        "The minutes run to {} parts.",
        docs.len()
    ))];
    let mut citations = Vec::new();
    for (doc_id, point) in &found {
        children.push(paragraph(point));
        citations.push(json!({"doc_id": doc_id, "quote": point}));
        citations.push(json!({"doc_id": doc_id, "quote": INVENTED}));
    }
    response(&p, children, json!(citations))
}

fn model(body: &Value) -> String {
    model_with(body, 1)
}

fn stub(respond: impl Fn(&Value, usize) -> Vec<Step> + Send + Sync + 'static) -> Stub {
    Stub::with_probes(
        |path| {
            (path == "/props").then(|| json!({"default_generation_settings": {"n_ctx": WINDOW}}))
        },
        respond,
    )
}

/// A host on `stub` that reads long pages without asking first.
fn host(stub: &Stub) -> Host {
    host_with(stub, "confirm_calls = 100000\n")
}

/// A host on `stub` with these `[limits]`.
fn host_with(stub: &Stub, limits: &str) -> Host {
    let config =
        format!("[runtime]\nkind = \"openai\"\nprofile = \"llama.cpp\"\n[limits]\n{limits}");
    Host::launch(Launch {
        env: vec![
            ("LAIKA_RUNTIME".into(), "openai".into()),
            ("LAIKA_BASE_URL".into(), stub.url.clone()),
            ("LAIKA_MODEL".into(), "m".into()),
        ],
        config: &config,
        ..Launch::default()
    })
}

/// The part a part call reads ("This is part 3 of 34 …").
fn part_number(body: &Value) -> usize {
    let text = packet(body)["input"]["user_message"]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    text.trim_start_matches("This is part ")
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn summarize() -> Value {
    json!({"name": "web.summarize", "args": {}})
}

/// (call_id, status) of each `operation` event, in order.
fn operations(events: &[Value]) -> Vec<(String, String)> {
    of_type(events, "operation")
        .iter()
        .map(|e| {
            (
                e["call_id"].as_str().unwrap().to_owned(),
                e["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_400k_page_is_summarized_in_parts_that_each_fit_an_8k_window() {
    let stub = stub(|body, _| sse_answer(&model(body), 40, "stop"));
    let mut host = host(&stub);
    let events = host.turn("t1", summarize(), "Summarize this page", long_page());
    let done = one(&events, "done");
    assert_eq!(done["status"], "ok", "{events:#?}");

    let seen = stub.seen();
    let parts = seen.iter().filter(|s| is_part(&s.body)).count();
    assert!(parts >= 10, "{parts} part calls");
    assert!(
        seen[..parts].iter().all(|s| is_part(&s.body)),
        "the parts come first"
    );
    let reduce_at = seen.len() - 1;
    assert!(
        !is_part(&seen[reduce_at].body),
        "the reduce call comes last"
    );
    for (i, s) in seen.iter().enumerate() {
        fits_the_window(&s.body, &format!("request {i}"));
    }
    // Every line of the page went to exactly one part call, in order.
    let page = long_page();
    let mut in_order: Vec<&stub::Seen> = seen[..parts].iter().collect();
    in_order.sort_by_key(|s| part_number(&s.body));
    assert_eq!(
        in_order
            .iter()
            .map(|s| part_number(&s.body))
            .collect::<Vec<_>>(),
        (1..=parts).collect::<Vec<_>>()
    );
    let sent: String = in_order
        .iter()
        .flat_map(|s| {
            packet(&s.body)["context"]["documents"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["content"]["text"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    let whole: String = std::iter::once(page["summary"]["text"].as_str().unwrap())
        .chain(
            page["chunks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["text"].as_str().unwrap()),
        )
        .collect();
    assert_eq!(sent, whole);

    // The fact reaches the reduce call through its part's points.
    let reduce = packet(&seen[reduce_at].body);
    let docs = reduce["context"]["documents"].as_array().unwrap();
    let part_docs: Vec<&Value> = docs
        .iter()
        .filter(|d| d["kind"] == "web.observation.part.v1")
        .collect();
    // Without combining rounds, one summary per part.
    assert_eq!(reduce_at, parts);
    assert_eq!(part_docs.len(), parts);
    let with_fact: Vec<&&Value> = part_docs
        .iter()
        .filter(|d| d["content"]["points"].to_string().contains(FACT))
        .collect();
    assert_eq!(with_fact.len(), 1, "{docs:#?}");
    assert!(with_fact[0]["content"]["part"].as_u64().unwrap() as usize > parts * 8 / 10);
    assert!(with_fact[0]["content"]["chunk_first"].as_u64().unwrap() > 80);
    assert!(!seen[reduce_at].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .contains("Item 3000."));

    // Progress: each part starts, then ends; all before the reduce.
    let ops = operations(&events);
    for n in 1..=parts {
        let id = format!("stage:part:{n}");
        let at = |status: &str| ops.iter().position(|(i, s)| *i == id && s == status);
        let (start, end) = (at("start"), at("success"));
        assert!(start.is_some() && start < end, "{id}: {ops:?}");
    }
    assert_eq!(ops.len(), parts * 2 + 2);
    assert_eq!(
        ops[parts * 2..],
        [
            ("stage:reduce".to_owned(), "start".to_owned()),
            ("stage:reduce".to_owned(), "success".to_owned())
        ]
    );
    assert!(of_type(&events, "operation")
        .iter()
        .any(|e| e["title"] == format!("Reading part 3 of {parts}").as_str()));
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let last_op = types.iter().rposition(|t| *t == "operation").unwrap();
    let first_op = types.iter().position(|t| *t == "operation").unwrap();
    assert!(types.iter().position(|t| *t == "context_usage").unwrap() < first_op);
    assert!(types.iter().position(|t| *t == "assistant").unwrap() > last_op);

    let usage = one(&events, "context_usage");
    let selection = &usage["selection"];
    assert_eq!(selection["strategy"], "staged", "{usage:#}");
    assert_eq!(selection["passages_total"], parts);
    assert_eq!(selection["passages_sent"], parts);
    assert_eq!(selection["sent_chars"], selection["page_chars"]);
    assert!(selection["page_chars"].as_u64().unwrap() >= 400_000);

    // The quote the page has is verified and names the page's chunk; the
    // one only the summary says is not.
    let citations = one(&events, "assistant")["citations"]
        .as_array()
        .unwrap()
        .clone();
    let fact = citations.iter().find(|c| c["quote"] == FACT).unwrap();
    assert_eq!(fact["verified"], true);
    assert!(
        fact["doc_id"]
            .as_str()
            .unwrap()
            .starts_with("doc:web:chunk:"),
        "{fact}"
    );
    let invented = citations.iter().find(|c| c["quote"] == INVENTED).unwrap();
    assert_eq!(invented["verified"], false, "{invented}");
    let text = laika_core::render::plain_text(&one(&events, "assistant")["render"]);
    assert!(text.contains(FACT), "{text}");
    assert!(!text.contains("could not be read"), "{text}");
}

#[test]
fn part_summaries_too_long_for_the_summary_call_are_combined_first() {
    // A window half as large: twice the parts, whose summaries overflow the
    // reduce call.
    let stub = Stub::with_probes(
        |path| {
            (path == "/props")
                .then(|| json!({"default_generation_settings": {"n_ctx": WINDOW / 2}}))
        },
        |body, _| sse_answer(&model_with(body, 6), 200, "stop"),
    );
    let mut host = host(&stub);
    let events = host.turn("t1", summarize(), "Summarize this page", long_page());
    assert_eq!(one(&events, "done")["status"], "ok", "{events:#?}");
    let seen = stub.seen();
    let parts = seen.iter().filter(|s| is_part(&s.body)).count();
    let merges = seen.iter().filter(|s| is_merge(&s.body)).count();
    assert!(
        merges >= 2 && merges < parts,
        "{merges} combining calls for {parts} parts"
    );
    assert_eq!(seen.len(), parts + merges + 1);
    for (i, s) in seen.iter().enumerate() {
        let asked = tokens_asked(&s.body);
        assert!(asked <= WINDOW, "request {i}: {asked} tokens of {WINDOW}");
    }
    let reduce = packet(&seen[seen.len() - 1].body);
    let summaries: Vec<&Value> = reduce["context"]["documents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["kind"] == "web.observation.part.v1")
        .collect();
    assert_eq!(summaries.len(), merges);
    // The combined stretches cover the page in order, the fact's among them.
    let first = summaries[0]["content"]["chunk_first"].as_u64().unwrap();
    let last = summaries[merges - 1]["content"]["chunk_last"]
        .as_u64()
        .unwrap();
    assert_eq!(
        (first, last),
        (0, long_page()["chunks"].as_array().unwrap().len() as u64)
    );
    assert!(summaries
        .iter()
        .any(|d| d["content"]["points"].to_string().contains(FACT)));
    let ops = operations(&events);
    let merge_ops = ops
        .iter()
        .filter(|(id, _)| id.starts_with("stage:merge:1:"))
        .count();
    assert_eq!(merge_ops, merges * 2);
    assert_eq!(ops.last().unwrap().0, "stage:reduce");
    let text = laika_core::render::plain_text(&one(&events, "assistant")["render"]);
    assert!(text.contains(FACT), "{text}");
}

#[test]
fn a_part_the_model_fails_on_is_left_out_and_named() {
    let stub = stub(|body, _| {
        let p = packet(body);
        let docs = p["context"]["documents"].to_string();
        if is_part(body) && docs.contains("\"chunk_index\":40,") {
            return status(500, "{\"error\": {\"message\": \"out of memory\"}}");
        }
        sse_answer(&model(body), 40, "stop")
    });
    let mut host = host(&stub);
    let events = host.turn("t1", summarize(), "Summarize this page", long_page());
    assert_eq!(one(&events, "done")["status"], "ok", "{events:#?}");
    let failed: Vec<&Value> = of_type(&events, "operation")
        .into_iter()
        .filter(|e| e["status"] == "error")
        .collect();
    assert_eq!(failed.len(), 1, "{failed:#?}");
    let failed_id = failed[0]["call_id"].as_str().unwrap();
    let n: usize = failed_id.rsplit(':').next().unwrap().parse().unwrap();
    let seen = stub.seen();
    let parts = seen.iter().filter(|s| is_part(&s.body)).count();
    let reduce = packet(&seen[seen.len() - 1].body);
    let part = reduce["context"]["documents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["doc_id"] == format!("doc:web:part:{n}"))
        .unwrap()
        .clone();
    assert!(part["content"]["points"].is_null(), "{part}");
    assert_eq!(part["content"]["not_read"], "RUNTIME_ERROR");
    let text = laika_core::render::plain_text(&one(&events, "assistant")["render"]);
    assert!(
        text.contains(&format!("part {n} of {parts}")) && text.contains("RUNTIME_ERROR"),
        "{text}"
    );
    // The other parts, the fact's among them, still made the summary.
    assert!(text.contains(FACT), "{text}");
}

#[test]
fn no_part_read_is_a_coded_error_and_no_summary_is_asked() {
    let stub = stub(|_, _| status(500, "{\"error\": {\"message\": \"model not loaded\"}}"));
    let mut host = host(&stub);
    let events = host.turn("t1", summarize(), "Summarize this page", long_page());
    let done = one(&events, "done");
    assert_eq!(done["status"], "failed");
    assert_eq!(done["error_code"], "RUNTIME_ERROR");
    assert!(one(&events, "error")["message"]
        .as_str()
        .unwrap()
        .contains("no part of the page could be read"));
    assert!(of_type(&events, "assistant").is_empty());
    assert!(stub.seen().iter().all(|s| is_part(&s.body)));
    assert!(operations(&events)
        .iter()
        .all(|(id, _)| id != "stage:reduce"));
}

#[test]
fn a_cancel_during_the_third_part_stops_every_step() {
    let stub = stub(|body, i| {
        if i == 2 {
            return vec![stub::ok_head("text/event-stream"), Step::Hold];
        }
        sse_answer(&model(body), 40, "stop")
    });
    // One call at a time, so the third is the one in flight.
    let mut host = host_with(&stub, "confirm_calls = 100000\ntransform_concurrency = 1\n");
    host.send(&turn_msg(
        "t1",
        summarize(),
        "Summarize this page",
        long_page(),
        None,
    ));
    let mut before = Vec::new();
    loop {
        let m = host.recv().expect("the turn's events");
        let third =
            m["type"] == "operation" && m["call_id"] == "stage:part:3" && m["status"] == "start";
        before.push(m);
        if third {
            break;
        }
    }
    // The third part's request is in flight at the stub.
    assert_eq!(stub.wait_requests(3).len(), 3);
    let (_, events) = host.cancel("c1", "t1");
    let done = one(&events, "done").clone();
    assert_eq!(done["status"], "cancelled", "{events:#?}");
    assert!(
        stub.wait_closed(2, Duration::from_secs(5)),
        "the call in flight was interrupted"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(stub.seen().len(), 3, "no part was asked after the cancel");
    let all: Vec<Value> = before.into_iter().chain(events).collect();
    assert!(of_type(&all, "assistant").is_empty());
    let ops = operations(&all);
    assert!(ops.iter().all(|(id, _)| id != "stage:reduce"), "{ops:?}");
    assert_eq!(
        ops.last().unwrap(),
        &("stage:part:3".to_owned(), "error".to_owned())
    );
    let conv = done["conversation_id"].as_str().unwrap();
    let h = host.request(json!({"type": "history.get", "id": "g", "conversation_id": conv}));
    let turn = &h["conversation"]["turns"][0];
    assert_eq!(turn["status"], "cancelled", "{h:#}");
    assert_eq!(turn["answer_text"].as_str().unwrap_or(""), "", "{h:#}");
}

#[test]
fn the_builtin_runtime_reads_the_page_whole_without_stages() {
    let mut host = Host::launch(Launch {
        config: "[limits]\ncontext_window_tokens = 8192\n",
        ..Launch::default()
    });
    let events = host.turn("t1", summarize(), "Summarize this page", long_page());
    assert_eq!(one(&events, "done")["status"], "ok", "{events:#?}");
    assert!(of_type(&events, "operation").is_empty());
    let usage = one(&events, "context_usage");
    assert!(usage["selection"].is_null(), "{usage:#}");
    assert!(usage["cut"].as_array().unwrap().is_empty(), "{usage:#}");
    let chunks = usage["documents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["kind"] == "web.observation.chunk.v1" && d["included"] == true)
        .count();
    assert_eq!(chunks, long_page()["chunks"].as_array().unwrap().len());
}

#[test]
fn parts_are_read_several_at_a_time_and_kept_in_page_order() {
    // Each part takes 300 ms at the model: four go at once, the fifth only
    // once one of them answered.
    let arrived = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen_at = arrived.clone();
    let stub = stub(move |body, _| {
        seen_at
            .lock()
            .unwrap()
            .push((std::time::Instant::now(), is_part(body)));
        let mut steps = vec![Step::Sleep(Duration::from_millis(300))];
        steps.extend(sse_answer(&model(body), 400, "stop"));
        steps
    });
    let mut host = host_with(&stub, "confirm_calls = 100000\ntransform_concurrency = 4\n");
    let events = host.turn("t1", summarize(), "Summarize this page", long_page());
    assert_eq!(one(&events, "done")["status"], "ok", "{events:#?}");
    let arrived = arrived.lock().unwrap().clone();
    let parts = arrived.iter().filter(|(_, part)| *part).count();
    assert!(parts > 8, "{parts} parts");
    let first = arrived[0].0;
    let gap = |i: usize| arrived[i].0.duration_since(first);
    assert!(
        gap(3) < Duration::from_millis(250),
        "four at once: {:?}",
        gap(3)
    );
    assert!(
        gap(4) >= Duration::from_millis(250),
        "not a fifth: {:?}",
        gap(4)
    );
    // The summaries reach the reduce call in page order, whatever order
    // their calls answered in.
    let seen = stub.seen();
    let reduce = packet(&seen[seen.len() - 1].body);
    let numbers: Vec<u64> = reduce["context"]["documents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["kind"] == "web.observation.part.v1")
        .map(|d| d["content"]["part"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, (1..=parts as u64).collect::<Vec<_>>());
    let text = laika_core::render::plain_text(&one(&events, "assistant")["render"]);
    assert!(text.contains(FACT), "{text}");
}

/// A chat request fits the stub's window by the window's own count (three
/// characters a token, plus the answer's `max_tokens`), and its prompt's
/// bytes fit the window's characters.
fn fits_the_window(body: &Value, what: &str) {
    let asked = tokens_asked(body);
    assert!(asked <= WINDOW, "{what}: {asked} tokens of {WINDOW}");
    let bytes: usize = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().len())
        .sum();
    assert!(
        bytes <= WINDOW * laika_core::pack::WINDOW_CHARS_PER_TOKEN,
        "{what}: {bytes} bytes"
    );
}

/// Sends a summarize turn and reads its events up to its `estimate`.
fn until_estimate(host: &mut Host, id: &str) -> (Vec<Value>, Value) {
    host.send(&turn_msg(
        id,
        summarize(),
        "Summarize this page",
        long_page(),
        None,
    ));
    let mut events = Vec::new();
    loop {
        let m = host.recv().expect("the turn's events");
        assert_ne!(m["type"], "done", "{events:#?}\n{m:#}");
        events.push(m.clone());
        if m["type"] == "estimate" {
            return (events, m);
        }
    }
}

fn answer(estimate: &Value, id: &str, approved: bool, start_only: bool) -> Value {
    json!({"type": "approval", "id": id, "call_id": estimate["call_id"], "digest": estimate["digest"],
           "approved": approved, "start_only": start_only})
}

#[test]
fn a_page_needing_more_calls_than_confirm_calls_waits_for_the_user_and_cancel_asks_nothing() {
    let stub = stub(|body, _| sse_answer(&model(body), 40, "stop"));
    let mut host = host_with(&stub, "");
    let (events, estimate) = until_estimate(&mut host, "t1");
    let parts = estimate["parts"].as_u64().unwrap();
    assert!(parts > 20, "{estimate:#}");
    assert!(estimate["calls"].as_u64().unwrap() > parts, "{estimate:#}");
    assert_eq!(estimate["concurrency"], 4);
    assert!(
        estimate["seconds"].is_null(),
        "nothing timed yet: {estimate:#}"
    );
    assert!(
        estimate["start_chars"].as_u64().unwrap() > 1000,
        "{estimate:#}"
    );
    assert!(estimate["page_chars"].as_u64().unwrap() >= 400_000);
    assert!(of_type(&events, "operation").is_empty());
    std::thread::sleep(Duration::from_millis(200));
    assert!(stub.seen().is_empty(), "nothing asked before the answer");

    // A forged digest changes nothing; the turn still waits.
    let mut forged = answer(&estimate, "a0", true, false);
    forged["digest"] = json!("0".repeat(64));
    host.send(&forged);
    let refused = host.until_any(&["error"], "a0");
    assert_eq!(refused.last().unwrap()["code"], "APPROVAL_MISMATCH");

    host.send(&answer(&estimate, "a1", false, false));
    let rest = host.until("done", "t1");
    assert!(
        rest.iter().any(|m| m["type"] == "approval.result"
            && m["reply_to"] == "a1"
            && m["approved"] == false),
        "{rest:#?}"
    );
    let done = one(&rest, "done");
    assert_eq!(done["status"], "cancelled", "{rest:#?}");
    assert!(of_type(&rest, "error").is_empty(), "a plain end: {rest:#?}");
    assert!(stub.seen().is_empty(), "no model call after Cancel");
    let conv = done["conversation_id"].as_str().unwrap();
    let h = host.request(json!({"type": "history.get", "id": "g", "conversation_id": conv}));
    assert_eq!(
        h["conversation"]["turns"][0]["status"], "cancelled",
        "{h:#}"
    );
}

#[test]
fn read_it_all_reads_every_part_and_the_next_estimate_knows_the_time() {
    let stub = stub(|body, _| sse_answer(&model(body), 40, "stop"));
    let mut host = host_with(&stub, "");
    let (_, estimate) = until_estimate(&mut host, "t1");
    host.send(&answer(&estimate, "a1", true, false));
    let events = host.until("done", "t1");
    assert_eq!(one(&events, "done")["status"], "ok", "{events:#?}");
    let parts = estimate["parts"].as_u64().unwrap() as usize;
    assert_eq!(
        stub.seen().iter().filter(|s| is_part(&s.body)).count(),
        parts
    );
    // Parts, combining rounds and the answer's call each fit the window.
    for (i, s) in stub.seen().iter().enumerate() {
        fits_the_window(&s.body, &format!("request {i}"));
    }
    let ops = operations(&events);
    assert_eq!(
        ops.last().unwrap(),
        &("stage:reduce".into(), "success".into())
    );
    // The calls were timed: the next estimate says how long, about.
    let (_, second) = until_estimate(&mut host, "t2");
    assert!(second["seconds"].as_u64().is_some(), "{second:#}");
}

#[test]
fn read_the_start_only_answers_in_one_call_from_what_fits() {
    let stub = stub(|body, _| sse_answer(&model(body), 40, "stop"));
    let mut host = host_with(&stub, "");
    let (_, estimate) = until_estimate(&mut host, "t1");
    host.send(&answer(&estimate, "a1", true, true));
    let events = host.until("done", "t1");
    assert_eq!(one(&events, "done")["status"], "ok", "{events:#?}");
    let seen = stub.seen();
    assert_eq!(seen.len(), 1, "one call");
    assert!(!is_part(&seen[0].body));
    // Two usages: the staged plan the estimate was made from, then what
    // the one call reads: the page's start, the rest cut.
    let usages = of_type(&events, "context_usage");
    let usage = usages.last().unwrap();
    assert!(usage["selection"].is_null(), "{usage:#}");
    assert!(!usage["cut"].as_array().unwrap().is_empty(), "{usage:#}");
    assert_eq!(usage["used"]["chars"], estimate["start_chars"], "{usage:#}");
    let sent = packet(&seen[0].body)["context"]["documents"].to_string();
    assert!(sent.contains("Item 0.") && !sent.contains(FACT));
    assert!(operations(&events).is_empty());
    // The one call fits the window as every other request does.
    fits_the_window(&seen[0].body, "the start only");
}
