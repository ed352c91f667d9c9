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
            let answer = answer_schema(&composed(task), &p, tokens);
            schema::compile(&answer).unwrap();
            let props = answer["properties"].as_object().unwrap();
            for field in HOST_FILLED {
                assert!(!props.contains_key(*field), "{field} in {task:?}");
            }
            assert_eq!(answer["required"], json!(["assistant"]));
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
        for tokens in [Some(96), Some(384), Some(4096)] {
            let answer = answer_schema(&composed(task), &p, tokens);
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
            let answer = answer_schema(&composed(task), &p, Some(tokens));
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
        let small = answer_schema(&composed(task), &p, Some(384));
        let big = answer_schema(&composed(task), &p, Some(4096));
        let text = |s: &Value| s["$defs"]["text"]["properties"]["text"]["maxLength"].as_u64();
        assert!(text(&small) < text(&big));
        assert!(max_chars(&small) < max_chars(&big));
    }
    // Below what the smallest answer needs the floors hold: the runtime's
    // cap then decides, as without an answer schema.
    let (task, p) = &tasks()[0];
    let tiny = answer_schema(&composed(*task), p, Some(8));
    assert_eq!(
        tiny["$defs"]["text"]["properties"]["text"]["maxLength"],
        json!(MIN_TEXT)
    );
}

#[test]
fn request_values_are_pinned() {
    let (_, p) = &tasks()[2];
    let answer = answer_schema(&composed(TaskName::Extract), p, Some(512));
    let data = &answer["properties"]["assistant"]["properties"]["data"];
    assert_eq!(data["required"], json!(["price", "Garantie (Jahre)", "色"]));
    assert_eq!(data["additionalProperties"], json!(false));
    let doc_id = answer
        .pointer("/properties/assistant/properties/citations/items/properties/doc_id/enum")
        .unwrap();
    assert_eq!(doc_id, &json!(["doc:web:summary", "doc:web:chunk:1"]));
    // Summaries and answers have no data field to invent.
    let (_, p) = &tasks()[0];
    let answer = answer_schema(&composed(TaskName::Summarize), p, Some(512));
    assert!(answer
        .pointer("/properties/assistant/properties/data")
        .is_none());
    // Tool calls are the offered tools, each with its own arguments.
    let variants = answer["$defs"]["tool_call"]["anyOf"].as_array().unwrap();
    let names: Vec<&str> = variants
        .iter()
        .map(|v| v["properties"]["name"]["const"].as_str().unwrap())
        .collect();
    let offered: Vec<&str> = tools::offered().map(|t| t.name).collect();
    assert_eq!(names, offered);
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
        let answer = answer_schema(&composed(task), &p, Some(384));
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
        assert!(
            sketch.contains("\ntool_call: {\"name\": \"browser.observe_dom\"|"),
            "{sketch}"
        );
        assert!(sketch.contains("\nblock: heading | paragraph | list"));
    }
}
