use super::*;
use crate::interceptor::Pipeline;
use crate::schema;
use laika_protocol::llmcp::ResponsePacket;

fn packet(task: &str, args: Value) -> RequestPacket {
    serde_json::from_value(json!({
        "protocol": {"name": "laika.llmcp", "version": 1},
        "id": "req-7",
        "type": "request",
        "created_at": "2026-01-24T12:34:56.789Z",
        "conversation": {"id": "c-9", "turn": 3},
        "sender": {"role": "agent"},
        "input": {
            "user_message": {"id": "u-1", "text": "go"},
            "task": {"name": task, "args": args}
        },
        "context": {"documents": [
            {"doc_id": "doc:web:summary", "kind": "web.observation.summary.v1", "trust": "untrusted", "source": {"browser": "x", "tab_id": null, "url": "https://e.org/"}, "content": {}},
            {"doc_id": "doc:web:chunk:1", "kind": "web.observation.chunk.v1", "trust": "untrusted", "source": {"browser": "x", "tab_id": null, "url": "https://e.org/"}, "content": {}}
        ], "transcript": []},
        "output": {"format": "json"}
    }))
    .unwrap()
}

/// The small regime at `tokens`, which sizes the caps.
fn small(max_tokens: Option<u32>) -> Decoding {
    Decoding {
        enforced: true,
        max_tokens,
        regime: Regime::Small,
    }
}

fn composed(task: TaskName) -> Value {
    Pipeline::standard()
        .schema(task, &crate::ambient::Fixed::new())
        .unwrap()
        .schema()
        .clone()
}

fn tasks() -> Vec<(TaskName, RequestPacket)> {
    vec![
        (TaskName::Summarize, packet("web.summarize", json!({}))),
        (TaskName::Answer, packet("web.answer", json!({}))),
        (
            TaskName::Extract,
            packet(
                "web.extract",
                json!({"fields": ["price", "Garantie (Jahre)", "色"]}),
            ),
        ),
    ]
}

/// An instance of `schema`: every optional property present, arrays at
/// `maxItems` (`full`) or `minItems`, strings at their longest, and the
/// `pick`-th alternative of every union (modulo its length), so several
/// picks cover every node kind.
fn instance(schema: &Value, root: &Value, pick: usize, full: bool) -> Value {
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        let def = root.pointer(target.strip_prefix('#').unwrap()).unwrap();
        return instance(def, root, pick, full);
    }
    if let Some(alts) = schema.get("anyOf").and_then(Value::as_array) {
        return instance(
            &alts[pick % alts.len()],
            root,
            pick / alts.len() + pick,
            full,
        );
    }
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        return options[pick % options.len()].clone();
    }
    let ty = match &schema["type"] {
        Value::String(t) => t.clone(),
        Value::Array(ts) => ts[pick % ts.len()].as_str().unwrap().to_string(),
        _ => "object".into(),
    };
    match ty.as_str() {
        "string" => {
            let n = if full {
                schema["maxLength"].as_u64().unwrap() as usize
            } else {
                schema["minLength"].as_u64().unwrap_or(1).max(1) as usize
            };
            json!("é".repeat(n))
        }
        "integer" => json!(schema["maximum"].as_i64().unwrap_or(1)),
        "number" => json!(schema["minimum"].as_f64().unwrap_or(1.5)),
        "boolean" => json!(full),
        "null" => Value::Null,
        "array" => {
            let n = if full {
                schema["maxItems"].as_u64().unwrap()
            } else {
                schema["minItems"].as_u64().unwrap_or(0)
            };
            Value::Array(
                (0..n as usize)
                    .map(|i| instance(&schema["items"], root, pick + i, full))
                    .collect(),
            )
        }
        _ => {
            let required = schema["required"].as_array().cloned().unwrap_or_default();
            let mut out = Map::new();
            for (k, v) in schema["properties"].as_object().into_iter().flatten() {
                if full || required.contains(&json!(k)) {
                    out.insert(k.clone(), instance(v, root, pick, full));
                }
            }
            Value::Object(out)
        }
    }
}

#[test]
fn answer_schemas_compile_and_leave_the_envelope_to_the_host() {
    for (task, p) in tasks() {
        for tokens in [Some(64), Some(384), None, Some(8192)] {
            let answer = answer_schema(&composed(task), &p, small(tokens));
            schema::compile(&answer).unwrap();
            let props = answer["properties"].as_object().unwrap();
            for field in HOST_FILLED {
                assert!(!props.contains_key(*field), "{field} in {task:?}");
            }
            // A question states its mode; a summary or an extraction never acts.
            let required = if task == TaskName::Answer {
                json!(["assistant", "mode"])
            } else {
                json!(["assistant"])
            };
            assert_eq!(answer["required"], required, "{task:?}");
            assert!(
                !answer.to_string().contains("#/$defs/node"),
                "the render tree is unrolled, not recursive"
            );
        }
    }
}

#[test]
fn every_answer_the_decoder_allows_is_a_valid_response_once_filled() {
    for (task, p) in tasks() {
        let full_schema = Pipeline::standard()
            .schema(task, &crate::ambient::Fixed::new())
            .unwrap();
        for decoding in [
            small(Some(96)),
            small(Some(384)),
            small(Some(4096)),
            Decoding::default(),
        ] {
            let tokens = (decoding.regime, decoding.max_tokens);
            let answer = answer_schema(&composed(task), &p, decoding);
            let own = schema::compile(&answer).unwrap();
            for pick in 0..24 {
                for full in [true, false] {
                    let mut v = instance(&answer, &answer, pick, full);
                    assert!(own.is_valid(&v), "generator: {v}");
                    if full {
                        assert!(
                            v.to_string().chars().count() <= max_chars(&answer),
                            "the size bound holds"
                        );
                    }
                    fill_envelope(&mut v, &p, &|| "res-1".into(), &|| {
                        "2026-01-24T12:34:57.000Z".into()
                    });
                    assert_eq!(
                        schema::validate(full_schema.validator(), &v),
                        Ok(()),
                        "{task:?} {tokens:?} pick {pick}: {v}"
                    );
                    assert!(schema::check_reply_to(&v, &p).is_empty());
                    let r: ResponsePacket = serde_json::from_value(v).unwrap();
                    assert_eq!(r.in_reply_to.request_id, "req-7");
                }
            }
        }
    }
}

#[test]
fn the_longest_answer_fits_the_token_budget() {
    for (task, p) in tasks() {
        for tokens in [256u32, 384, 512, 1024, 4096] {
            let answer = answer_schema(&composed(task), &p, small(Some(tokens)));
            let chars = max_chars(&answer);
            let text = answer["$defs"]["text"]["properties"]["text"]["maxLength"].as_u64();
            // Over budget only at the floors.
            assert!(
                chars <= (tokens * CHARS_PER_TOKEN) as usize || text == Some(MIN_TEXT as u64),
                "{task:?} at {tokens} tokens: {chars} chars"
            );
            if tokens >= 512 {
                assert!(
                    chars <= (tokens * CHARS_PER_TOKEN) as usize,
                    "{task:?} at {tokens}"
                );
            }
        }
        // A bigger budget allows longer texts and more blocks.
        let little = answer_schema(&composed(task), &p, small(Some(384)));
        let big = answer_schema(&composed(task), &p, small(Some(4096)));
        let text = |s: &Value| s["$defs"]["text"]["properties"]["text"]["maxLength"].as_u64();
        assert!(text(&little) < text(&big));
        assert!(max_chars(&little) < max_chars(&big));
    }
    // Below what the smallest answer needs the floors hold: the runtime's
    // cap then decides, as without an answer schema.
    let (task, p) = &tasks()[0];
    let tiny = answer_schema(&composed(*task), p, small(Some(8)));
    assert_eq!(
        tiny["$defs"]["text"]["properties"]["text"]["maxLength"],
        json!(MIN_TEXT)
    );
}

#[test]
fn request_values_are_pinned() {
    let (_, p) = &tasks()[2];
    let answer = answer_schema(&composed(TaskName::Extract), p, small(Some(512)));
    let data = &answer["properties"]["assistant"]["properties"]["data"];
    assert_eq!(data["required"], json!(["price", "Garantie (Jahre)", "色"]));
    assert_eq!(data["additionalProperties"], json!(false));
    let doc_id = answer
        .pointer("/properties/assistant/properties/citations/items/properties/doc_id/enum")
        .unwrap();
    assert_eq!(doc_id, &json!(["doc:web:summary", "doc:web:chunk:1"]));
    // Summaries and answers have no data field to invent, and a summary
    // never acts: no tool call at all.
    let (_, p) = &tasks()[0];
    let answer = answer_schema(&composed(TaskName::Summarize), p, small(Some(512)));
    assert!(answer
        .pointer("/properties/assistant/properties/data")
        .is_none());
    assert_eq!(answer["properties"]["tool_calls"]["maxItems"], json!(0));
    let (_, p) = &tasks()[1];
    let answer = answer_schema(&composed(TaskName::Answer), p, small(Some(512)));
    // Tool calls are the offered tools, each with its own arguments.
    let variants = answer["$defs"]["tool_call"]["anyOf"].as_array().unwrap();
    let names: Vec<&str> = variants
        .iter()
        .map(|v| v["properties"]["name"]["const"].as_str().unwrap())
        .collect();
    let offered: Vec<&str> = tools::for_request(p, tools::McpTools::none())
        .iter()
        .map(|t| &*t.name)
        .collect();
    assert_eq!(names, offered);
    assert!(
        !names.contains(&"transform.run"),
        "no collection to run it on"
    );
    let click = &variants[names.iter().position(|n| *n == "browser.click").unwrap()];
    assert_eq!(click["required"], json!(["name", "arguments"]));
    assert_eq!(
        click["properties"]["arguments"]["required"],
        json!(["handleId"])
    );
    assert!(!answer.to_string().contains("maxBytes"));
}

#[test]
fn fill_keeps_what_the_model_wrote_and_adds_the_rest() {
    let (_, p) = &tasks()[0];
    let asked = std::cell::Cell::new(0);
    let mut v = json!({"id": "model-id", "assistant": {}});
    fill_envelope(
        &mut v,
        p,
        &|| {
            asked.set(asked.get() + 1);
            "host-id".into()
        },
        &|| "2026-01-24T00:00:00.000Z".into(),
    );
    assert_eq!(asked.get(), 0, "an id the model wrote is not replaced");
    assert_eq!(v["id"], "model-id");
    assert_eq!(v["in_reply_to"], json!({"request_id": "req-7"}));
    assert_eq!(v["conversation"], json!({"id": "c-9", "turn": 3}));
    assert_eq!(v["created_at"], "2026-01-24T00:00:00.000Z");
    assert_eq!(v["protocol"], json!({"name": "laika.llmcp", "version": 1}));
    // A wrong copy is the model's and is still refused by the reply-to check.
    let mut wrong = json!({"in_reply_to": {"request_id": "req-0"}});
    fill_envelope(&mut wrong, p, &|| "x".into(), &|| "t".into());
    assert_eq!(
        schema::check_reply_to(&wrong, p)[0].path,
        "/in_reply_to/request_id"
    );
    let mut not_object = json!([1]);
    fill_envelope(&mut not_object, p, &|| "x".into(), &|| "t".into());
    assert_eq!(not_object, json!([1]));
}

#[test]
fn the_sketch_is_much_shorter_than_the_schema() {
    for (task, p) in tasks() {
        let answer = answer_schema(&composed(task), &p, small(Some(384)));
        let sketch = sketch(&answer);
        let schema_len = serde_json::to_string(&answer).unwrap().len();
        assert!(
            sketch.len() * 3 < schema_len,
            "{} vs {schema_len}: {sketch}",
            sketch.len()
        );
        assert!(sketch.starts_with("{\"assistant\": {"), "{sketch}");
        assert!(sketch.contains("\"title\": string(≤"), "{sketch}");
        assert!(
            sketch.contains("\ndoc: {\"children\": [block, at most"),
            "{sketch}"
        );
        assert_eq!(
            sketch.contains("\ntool_call: {\"name\": \"browser.observe_dom\"|"),
            task == TaskName::Answer,
            "{sketch}"
        );
        assert!(sketch.contains("\nblock: heading | paragraph | list"));
    }
}

/// A ten-point summary with a table and six citations, as a capable model
/// writes it: `points` list items of `point` characters.
fn capable_answer(points: usize, point: usize) -> Value {
    let text = |n: usize| json!({"type": "text", "text": "é".repeat(n)});
    let items: Vec<Value> = (0..points)
        .map(|_| json!({"type": "list_item", "children": [{"type": "paragraph", "children": [text(point)]}]}))
        .collect();
    let cell =
        |header: bool| json!({"type": "table_cell", "header": header, "children": [text(20)]});
    let rows: Vec<Value> = (0..8)
        .map(|r| json!({"type": "table_row", "cells": (0..6).map(|_| cell(r == 0)).collect::<Vec<_>>()}))
        .collect();
    let paragraph = json!({"type": "paragraph", "children": [
        text(400),
        {"type": "link", "href": "https://example.org/a", "children": [text(30)]},
        text(200),
    ]});
    let citations: Vec<Value> = (0..6)
        .map(|_| json!({"doc_id": "doc:web:summary", "quote": "é".repeat(150)}))
        .collect();
    json!({
        "assistant": {
            "title": "Night trains are back",
            "render": {"type": "doc", "children": [
                {"type": "heading", "level": 2, "children": [text(40)]},
                paragraph,
                {"type": "list", "ordered": false, "items": items},
                {"type": "table", "rows": rows},
                {"type": "paragraph", "children": [text(300)]},
                {"type": "heading", "level": 3, "children": [text(40)]},
                {"type": "paragraph", "children": [text(300)]},
                {"type": "paragraph", "children": [text(300)]},
            ]},
            "citations": citations,
        },
        "tool_calls": []
    })
}

#[test]
fn the_full_regime_admits_a_real_answer_and_the_default_budget_holds_it() {
    let caps = Caps::FULL;
    assert!(caps.blocks >= 8 && caps.list_items >= 10 && caps.text >= 400);
    assert!(caps.inlines >= 3 && caps.rows >= 8 && caps.cells >= 6 && caps.citations >= 6);
    for (task, p) in tasks() {
        let answer = answer_schema(&composed(task), &p, Decoding::default());
        let own = schema::compile(&answer).unwrap();
        let mut capable = capable_answer(10, 120);
        if task == TaskName::Extract {
            capable["assistant"]["data"] =
                json!({"price": "12 €", "Garantie (Jahre)": "2", "色": null});
        }
        if task == TaskName::Answer {
            capable["mode"] = json!("inform");
        }
        let errors: Vec<String> = own.iter_errors(&capable).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{task:?}: {errors:?}");
        let text = crate::render::text::doc_text(
            &crate::render::sanitize(&capable["assistant"]["render"], &Default::default()).render,
        );
        assert!(text.chars().count() >= 2_500, "{}", text.chars().count());
        // Sized to hold it: the answer's JSON within the default budget.
        let chars = capable.to_string().chars().count();
        assert!(
            chars <= (DEFAULT_MAX_TOKENS * CHARS_PER_TOKEN) as usize,
            "{chars} chars"
        );
        // The small regime at the same budget cannot hold it.
        let tight = answer_schema(&composed(task), &p, small(Some(DEFAULT_MAX_TOKENS)));
        assert!(!schema::compile(&tight).unwrap().is_valid(&capable));
    }
}

#[test]
fn a_small_answer_gets_a_code_block_only_where_the_page_has_code() {
    let (task, mut p) = tasks().remove(0);
    let blocks = |p: &RequestPacket| {
        answer_schema(&composed(task), p, small(Some(512)))["$defs"]["block"]["anyOf"].to_string()
    };
    assert!(!blocks(&p).contains("code_block"));
    p.context.documents[0].content = json!({"text": "H1: Install\nCode: cargo build"});
    assert!(blocks(&p).contains("code_block"));
    let full = answer_schema(&composed(task), &tasks()[0].1, Decoding::default());
    assert!(full["$defs"]["block"]["anyOf"]
        .to_string()
        .contains("code_block"));
}

#[test]
fn a_summary_suggests_follow_ups_within_each_regimes_caps() {
    let at = "/properties/assistant/properties/follow_ups";
    let (_, summary) = &tasks()[0];
    let full = answer_schema(&composed(TaskName::Summarize), summary, Decoding::default());
    let follow_ups = full.pointer(at).unwrap();
    assert_eq!(follow_ups["maxItems"], json!(3));
    assert_eq!(follow_ups["items"]["maxLength"], json!(120));
    assert!(
        !full["required"]
            .as_array()
            .unwrap()
            .contains(&json!("follow_ups"))
            && !full
                .pointer("/properties/assistant/required")
                .and_then(Value::as_array)
                .is_some_and(|r| r.contains(&json!("follow_ups"))),
        "optional: a summary may suggest none"
    );
    // A small model gets none until its summary has two blocks and two
    // citations (about 1,000 output tokens, its sentence-long text nodes
    // first), then one short question.
    for tokens in [96, 384, 512] {
        let small_answer =
            answer_schema(&composed(TaskName::Summarize), summary, small(Some(tokens)));
        assert!(
            small_answer.pointer(at).is_none(),
            "{tokens}: {small_answer}"
        );
    }
    let roomy = answer_schema(&composed(TaskName::Summarize), summary, small(Some(1024)));
    let one = roomy.pointer(at).unwrap();
    assert_eq!(one["maxItems"], json!(1));
    assert!(one["items"]["maxLength"].as_u64().unwrap() <= 80);
    // Questions, extractions and the key points a summary in parts reads
    // back suggest none.
    for (task, p) in &tasks()[1..] {
        assert!(answer_schema(&composed(*task), p, Decoding::default())
            .pointer(at)
            .is_none());
    }
    let points = packet("web.summarize", json!({"max_points": 5}));
    assert!(
        answer_schema(&composed(TaskName::Summarize), &points, Decoding::default())
            .pointer(at)
            .is_none()
    );
}

/// At the budget a small model is run with (512 tokens), a small answer's
/// text node holds a whole sentence: the structure stays small instead
/// (a list of two, one block, one citation), and the longest answer the
/// grammar allows still fits. Labels, values and links stay short, and a
/// paragraph of one inline is text, never a bare link.
#[test]
fn a_small_answer_has_room_for_a_sentence() {
    for (task, p) in tasks() {
        let answer = answer_schema(&composed(task), &p, small(Some(512)));
        let defs = &answer["$defs"];
        let text = defs["text"]["properties"]["text"]["maxLength"]
            .as_u64()
            .unwrap();
        assert!(text >= 120, "{task:?}: text nodes of {text} chars");
        assert!(
            max_chars(&answer) <= 512 * CHARS_PER_TOKEN as usize,
            "{task:?}"
        );
        let label = defs["label"]["properties"]["text"]["maxLength"]
            .as_u64()
            .unwrap();
        assert!(label < text, "{task:?}: labels of {label} chars");
        assert_eq!(
            defs["inline"]["anyOf"],
            json!([{"$ref": "#/$defs/text"}]),
            "{task:?}"
        );
        assert!(defs["list"]["properties"]["items"]["maxItems"].as_u64() >= Some(2));
    }
    // The full regime keeps its caps: links beside text, labels as long as text.
    let full = answer_schema(
        &composed(TaskName::Answer),
        &tasks()[1].1,
        Decoding::default(),
    );
    assert_eq!(
        full["$defs"]["inline"]["anyOf"].as_array().map(Vec::len),
        Some(2)
    );
    assert_eq!(
        full["$defs"]["label"]["properties"]["text"]["maxLength"],
        json!(MAX_TEXT)
    );
}
