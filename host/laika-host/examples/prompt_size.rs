//! Prompt size against page size: prints figures, asserts nothing.
//!
//! `cargo run --release --example prompt_size -- OBS_DIR [QUESTION]`
//!
//! OBS_DIR holds observations as the extension builds them, one JSON file a
//! page (`node tests/extraction/observe.mjs PAGES_DIR OBS_DIR` writes them
//! for the article corpus). For each page and for `web.summarize` and
//! `web.answer` (QUESTION, default below) the request is packed and its
//! prompts composed exactly as a turn does for an OpenAI-compatible server
//! that enforces the schema (the `llama.cpp` profile) with the default
//! budget, and the prompt (system + user message, in characters) is set
//! against the page's text (the observation's `text` and chunks). Goal:
//! median prompt ≤ 1.3 × page text + 2,000.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use laika_core::decoding::Decoding;
use laika_core::interceptor::Pipeline;
use laika_core::pack::{self, Budget, PackInput};
use laika_protocol::ids::ConversationId;
use laika_protocol::limits::Limits;
use laika_protocol::llmcp::{Task, TaskName};
use laika_protocol::observation::Observation;
use std::path::PathBuf;
#[path = "support/stats.rs"]
mod stats;
use stats::quantile;

const QUESTION: &str = "What does the article say about the costs and who pays them?";

struct Figures {
    page: usize,
    system: usize,
    prompt: usize,
}

fn measure(obs: &Observation, task: TaskName, question: &str) -> Figures {
    let ambient = laika_core::ambient::Fixed::new();
    let conversation = ConversationId::from("c-1");
    let task = Task {
        name: task,
        args: Default::default(),
    };
    let packed = pack::pack(
        &PackInput {
            conversation_id: &conversation,
            turn: 1,
            user_message_id: "u-1",
            user_text: question,
            task: &task,
            observation: Some(obs),
            browser: "chrome",
            tab_id: Some("1".into()),
            history: None,
            recent_turns: 8,
            ambient: &ambient,
            for_model: true,
        },
        Budget::for_runtime("openai", &Limits::default()),
    );
    let pipeline = Pipeline::standard();
    let composed = pipeline.schema(task.name, &ambient).expect("schema");
    let request = pipeline.model_request(
        packed.packet,
        &composed,
        Decoding {
            enforced: true,
            max_tokens: Some(4096),
            ..Decoding::default()
        },
        laika_core::tools::McpTools::none(),
    );
    let page = obs.summary.text.chars().count()
        + obs
            .chunks
            .iter()
            .map(|c| c.text.chars().count())
            .sum::<usize>();
    let system = request.system_prompt.chars().count();
    Figures {
        page,
        system,
        prompt: system + request.user_prompt.chars().count(),
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().expect("usage: prompt_size OBS_DIR [QUESTION]"));
    let question = args.next().unwrap_or_else(|| QUESTION.to_string());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("OBS_DIR")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let pages: Vec<Observation> = files
        .iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(p).ok()?;
            Observation::from_value(serde_json::from_str(&text).ok()?).ok()
        })
        .filter(|o| !o.summary.text.trim().is_empty())
        .collect();
    println!(
        "{} pages from {}; question for web.answer: {question:?}",
        pages.len(),
        dir.display()
    );
    for (label, task) in [
        ("summarize", TaskName::Summarize),
        ("answer", TaskName::Answer),
    ] {
        let figures: Vec<Figures> = pages.iter().map(|o| measure(o, task, &question)).collect();
        let column =
            |f: &dyn Fn(&Figures) -> f64| quantile(&figures.iter().map(f).collect::<Vec<_>>(), 0.5);
        let met = figures
            .iter()
            .filter(|f| f.prompt as f64 <= 1.3 * f.page as f64 + 2000.0)
            .count();
        println!(
            "{label:>9}: median page text {:>7.0} chars, prompt {:>7.0} chars ({:.2} × page; beyond the page {:>6.0}), system prompt {:>5.0}; prompt / (1.3 × page + 2,000) median {:.2}; goal met on {met}/{}",
            column(&|f| f.page as f64),
            column(&|f| f.prompt as f64),
            column(&|f| f.prompt as f64 / f.page.max(1) as f64),
            column(&|f| f.prompt as f64 - f.page as f64),
            column(&|f| f.system as f64),
            column(&|f| f.prompt as f64 / (1.3 * f.page as f64 + 2000.0)),
            figures.len()
        );
    }
}
