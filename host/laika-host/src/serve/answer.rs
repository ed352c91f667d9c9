//! Answers one NLWeb ask over what Laika has read: picks the source
//! `query.site` names, retrieves the stored turns that match, and runs the
//! same engine and runtime a sidebar turn runs over them (the documents are
//! its observation), so the answer's citations are verified the same way.
//!
//! Blocking: it runs on a blocking thread (`spawn_blocking`), as the engine's
//! driver (`turn::run`) and the runtimes are synchronous.

use super::nlweb::{
    Action, AskRequest, Elicitation, Failure, FailureCode, Grounding, GroundingCitation, Mode,
    Payload, Question, QuestionType, ResultObject, SCHEMA_ORG,
};
use super::senses;
use crate::config::Config;
use crate::store::documents::HistoryDocument;
use crate::store::Store;
use crate::turn::{self, TurnContext};
use laika_core::engine::Input;
use laika_core::runtime::Runtime;
use laika_core::text::prefix_chars;
use laika_protocol::collection::{CitedSource, Collection, Source};
use laika_protocol::deferred::Deferred;
use laika_protocol::error::ErrorCode;
use laika_protocol::event::{Event, Sink};
use laika_protocol::ids::{CollectionId, ConversationId, RequestId};
use laika_protocol::llmcp::{Task, TaskName};
use laika_protocol::observation::{Chunk, Observation, Summary, CHUNK_DOC_TYPE, SUMMARY_DOC_TYPE};
use laika_protocol::wire::{Tab, TurnRequest, UserText};
use laika_runtime::CancelToken;
use serde_json::{Map, Value};
use std::sync::mpsc::Receiver;
use std::sync::Mutex;

/// The observation URL of an ask: marks the turns `serve` stored, so they
/// are not retrieved as documents themselves.
pub const HISTORY_URL: &str = "laika:history";
/// The source name for the whole history.
pub const HISTORY: &str = "history";
/// Stored turns an answer is drawn from.
const MAX_DOCUMENTS: usize = 8;
/// Characters of a result's description.
const DESCRIPTION_CHARS: usize = 300;
/// Chunk ids the packer gives (`doc:web:chunk:<n>`, 1-based).
const CHUNK_DOC_PREFIX: &str = "doc:web:chunk:";

/// What one ask needs.
pub struct AskContext<'a> {
    pub config: &'a Config,
    pub runtime: &'a dyn Runtime,
    pub store: &'a Mutex<Store>,
    pub cancel: &'a CancelToken,
    pub inbox: &'a Receiver<Input>,
}

/// An ask's outcome: the payload, and the Laika conversation it was stored
/// in (when the engine ran).
pub struct Answered {
    pub payload: Payload,
    pub conversation_id: Option<ConversationId>,
}

impl From<Failure> for Answered {
    fn from(f: Failure) -> Answered {
        Answered {
            payload: f.into(),
            conversation_id: None,
        }
    }
}

/// Where an ask looks, from `query.site`.
#[derive(Debug, Clone, PartialEq)]
pub enum Scope {
    /// The history; `Some` keeps only pages from these origins.
    History(Option<Vec<String>>),
    /// The collection with this id.
    Collection(CollectionId),
    /// The name fits several sources: the client must choose.
    Choose(Vec<Choice>),
    /// Nothing by that name.
    Unknown,
}

/// One source an ambiguous name may mean: `option` is what to send back as
/// `query.site` to pick it, `label` what a person recognises it by.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub option: String,
    pub label: String,
}

/// Resolves `site` against the collections and the page origins in the
/// history: `history` (or nothing) is all of it; a collection's id, or its
/// title in any case, is that collection; a domain keeps that domain and
/// its subdomains; a bare name (`example`) that is a label of exactly one
/// host keeps it. A name that fits several sources asks which.
pub fn resolve(site: Option<&str>, origins: &[String], collections: &[Collection]) -> Scope {
    let raw = site.map(str::trim).unwrap_or_default();
    let site = normalize_site(raw);
    if site.is_empty() || site == HISTORY {
        return Scope::History(None);
    }
    // Ids are unique: an exact id is never ambiguous.
    if let Some(c) = collections.iter().find(|c| c.id == raw) {
        return Scope::Collection(c.id.clone());
    }
    let name = raw.to_lowercase();
    let named: Vec<Choice> = collections
        .iter()
        .filter(|c| c.title.trim().to_lowercase() == name)
        .map(|c| Choice {
            option: c.id.to_string(),
            label: format!("the collection \"{}\" ({})", c.title.trim(), c.id),
        })
        .collect();
    match (resolve_site(&site, origins), named.as_slice()) {
        (scope, []) => scope,
        (Scope::Unknown, [one]) => Scope::Collection(CollectionId::from(one.option.as_str())),
        (Scope::History(Some(within)), _) => {
            // The origins themselves pick the sites: a collection's title
            // is never `https://…`, so the answer is not ambiguous again.
            let mut choices = named.clone();
            choices.extend(within.into_iter().map(|o| Choice {
                label: format!("the site {o}"),
                option: o,
            }));
            Scope::Choose(choices)
        }
        (Scope::Choose(sites), _) => {
            let mut choices = named.clone();
            choices.extend(sites.into_iter().map(|c| Choice {
                option: format!("https://{}", c.option),
                label: c.label,
            }));
            Scope::Choose(choices)
        }
        (_, several) => Scope::Choose(several.to_vec()),
    }
}

/// `resolve` over the history's origins alone, for a normalized `site`.
fn resolve_site(site: &str, origins: &[String]) -> Scope {
    let hosts: Vec<(&String, String)> = origins
        .iter()
        .filter_map(|o| Some((o, url::Url::parse(o).ok()?.host_str()?.to_lowercase())))
        .collect();
    let within: Vec<String> = hosts
        .iter()
        .filter(|(_, h)| *h == site || h.ends_with(&format!(".{site}")))
        .map(|(o, _)| (*o).clone())
        .collect();
    if !within.is_empty() {
        return Scope::History(Some(within));
    }
    let mut named: Vec<(&String, &String)> = hosts
        .iter()
        .filter(|(_, h)| h.split('.').any(|label| label == site))
        .map(|(o, h)| (*o, h))
        .collect();
    named.sort_by(|a, b| a.1.cmp(b.1));
    named.dedup_by(|a, b| a.1 == b.1);
    match named.as_slice() {
        [] => Scope::Unknown,
        [(origin, _)] => Scope::History(Some(vec![(*origin).clone()])),
        several => Scope::Choose(
            several
                .iter()
                .map(|(_, h)| Choice {
                    option: (*h).clone(),
                    label: format!("the site {h}"),
                })
                .collect(),
        ),
    }
}

/// `https://www.Example.com/` → `example.com`.
fn normalize_site(site: &str) -> String {
    let s = site.trim().to_lowercase();
    let s = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"))
        .unwrap_or(&s);
    let s = s.split('/').next().unwrap_or_default();
    s.strip_prefix("www.").unwrap_or(s).to_owned()
}

/// Answers `request`. Never panics; every failure is a coded Failure.
/// `early` is given the pages as soon as they are retrieved, before the
/// model runs (so a stream can send them first).
pub fn answer(request: &AskRequest, ctx: &AskContext<'_>, early: &dyn Fn(Early)) -> Answered {
    let format = request.prefer.response_format;
    match documents(request, ctx.store) {
        Ok(Documents::History(docs)) => {
            let pages = page_results(&docs, &[]);
            if request.prefer.mode == Mode::List {
                let text = listing(pages.iter().map(|p| p.name.as_str()));
                return Answered {
                    payload: Payload::answer(format, text, pages),
                    conversation_id: None,
                };
            }
            let conversation_id = conversation_of(request);
            early(Early {
                conversation_id: conversation_id.clone(),
                results: pages,
            });
            run_engine(request, &docs, (conversation_id, None), ctx)
        }
        Ok(Documents::Collection(id)) if request.prefer.mode == Mode::List => {
            match listed_sources(&id, ctx.store) {
                Ok(pages) => Answered {
                    payload: Payload::answer(
                        format,
                        listing(pages.iter().map(|p| p.name.as_str())),
                        pages,
                    ),
                    conversation_id: None,
                },
                Err(answered) => *answered,
            }
        }
        Ok(Documents::Collection(id)) => {
            run_engine(request, &[], (conversation_of(request), Some(id)), ctx)
        }
        Err(answered) => *answered,
    }
}

/// The results ready before the model runs, and the conversation the ask
/// will be stored in.
pub struct Early {
    pub conversation_id: ConversationId,
    pub results: Vec<ResultObject>,
}

/// The conversation the ask goes into: the one `session_context` names,
/// else a new one (named now, so a stream can say it before the answer).
fn conversation_of(request: &AskRequest) -> ConversationId {
    request
        .meta
        .session_context
        .as_ref()
        .and_then(|s| s.conversation_id.clone())
        .map(ConversationId::from)
        .unwrap_or_else(|| {
            laika_core::ambient::Ambient::new_id(&laika_runtime::SystemAmbient).into()
        })
}

/// A list answer's text: one line per result's name.
fn listing<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names
        .map(|n| format!("- {n}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A collection's sources as results, in the collection's order.
fn listed_sources(
    id: &CollectionId,
    store: &Mutex<Store>,
) -> Result<Vec<ResultObject>, Box<Answered>> {
    let store = store.lock().map_err(|_| {
        Box::new(Answered::from(Failure::new(
            FailureCode::InternalError,
            "the history is unavailable after an earlier failure",
        )))
    })?;
    let pack = store.collection_pack(id).map_err(store_failure)?;
    Ok(pack
        .sources
        .iter()
        .map(|source| ResultObject {
            result_type: page_type(source.url.as_ref(), "CreativeWork"),
            name: source.title.clone(),
            url: source.url.clone(),
            description: prefix_chars(source.text.trim(), DESCRIPTION_CHARS).to_owned(),
            grounding: Grounding {
                source_urls: source.url.iter().cloned().collect(),
                citations: Vec::new(),
            },
            actions: open_page(source.url.as_deref()).into_iter().collect(),
            extra: identified(source.id.to_string(), source.captured_at.clone()),
        })
        .collect())
}

/// What an ask answers from.
enum Documents {
    /// Stored turns retrieved from the history.
    History(Vec<HistoryDocument>),
    /// The collection with this id: the engine loads and packs its sources
    /// as it does for a sidebar turn over it.
    Collection(CollectionId),
}

fn store_failure(e: laika_protocol::error::Error) -> Box<Answered> {
    tracing::error!(code = %e.code, "serve: the history could not be read: {}", e.chain());
    Box::new(Failure::new(FailureCode::InternalError, "the history could not be read").into())
}

/// The stored turns to answer from, or the response that ends the ask
/// early (an Elicitation, NO_RESULTS).
fn documents(request: &AskRequest, store: &Mutex<Store>) -> Result<Documents, Box<Answered>> {
    let store = store.lock().map_err(|_| {
        Box::new(Answered::from(Failure::new(
            FailureCode::InternalError,
            "the history is unavailable after an earlier failure",
        )))
    })?;
    let origins = store.page_origins().map_err(store_failure)?;
    let collections = store.list_collections(usize::MAX).map_err(store_failure)?;
    let site = request.query.site.as_deref();
    let only = match resolve(site, &origins, &collections) {
        Scope::History(only) => only,
        Scope::Collection(id) => return Ok(Documents::Collection(id)),
        Scope::Choose(choices) => {
            let site = prefix_chars(site.unwrap_or_default().trim(), 100);
            let labels: Vec<&str> = choices.iter().map(|c| c.label.as_str()).collect();
            return Err(Box::new(Answered {
                payload: Payload::Elicitation {
                    elicitation: Elicitation {
                        text: format!(
                            "\"{site}\" matches several sources you have: {}.",
                            labels.join("; ")
                        ),
                        questions: vec![Question {
                            id: "site".into(),
                            text: "Which one do you mean? Ask again with it as query.site.".into(),
                            question_type: QuestionType::SingleSelect,
                            options: choices.into_iter().map(|c| c.option).collect(),
                        }],
                    },
                },
                conversation_id: None,
            }));
        }
        Scope::Unknown => {
            return Err(Box::new(
                Failure::new(
                    FailureCode::NoResults,
                    format!(
                        "no collection or site called {:?} in what you have read; query.site may be \"{HISTORY}\" or a site from your history",
                        prefix_chars(site.unwrap_or_default(), 100)
                    ),
                )
                .into(),
            ))
        }
    };
    let filters = filter_values(&request.query.filters);
    let item_type = request.query.item_type.as_deref().map(str::trim);
    let keep = |d: &HistoryDocument| {
        only.as_ref()
            .is_none_or(|o| d.origin.as_ref().is_some_and(|origin| o.contains(origin)))
            && filters.iter().all(|f| mentions(d, f))
            && item_type.is_none_or(|t| is_a(&doc_type(d), t))
    };
    // Decontextualized in steps, each only when the one before found
    // nothing: the query alone, then with the queries before it (a
    // follow-up like "and the price?"), then with the context's text.
    let context = &request.context;
    let mut tries = vec![request.query.text.clone()];
    if !context.prev.is_empty() {
        tries.push(format!("{} {}", request.query.text, context.prev.join(" ")));
    }
    if let Some(text) = context.text.as_deref().filter(|t| !t.trim().is_empty()) {
        tries.push(format!(
            "{} {text}",
            tries.last().cloned().unwrap_or_default()
        ));
    }
    let mut docs = Vec::new();
    for query in &tries {
        docs = store
            .history_documents(query, HISTORY_URL, MAX_DOCUMENTS, &keep)
            .map_err(store_failure)?;
        if !docs.is_empty() {
            break;
        }
    }
    if docs.is_empty() {
        let message = match item_type {
            Some(t) => format!(
                "nothing you have read with Laika of type {:?} matches this query (history holds WebPage and Conversation)",
                prefix_chars(t, 100)
            ),
            None => "nothing you have read with Laika matches this query".to_owned(),
        };
        return Err(Box::new(
            Failure::new(FailureCode::NoResults, message).into(),
        ));
    }
    let context_words = senses::words(&format!(
        "{}\n{}",
        context.text.as_deref().unwrap_or_default(),
        context.memory.join("\n")
    ));
    senses::order_by_context(&mut docs, &context_words);
    let readings = senses::ambiguous(&request.query.text, &docs, &context_words);
    if !readings.is_empty() {
        return Err(Box::new(ask_which_reading(
            &request.query.text,
            &docs,
            &readings,
        )));
    }
    Ok(Documents::History(docs))
}

/// The Elicitation for a question that reads several ways: one option per
/// reading, the title of its best page, to send back as `context.text`.
fn ask_which_reading(
    question: &str,
    docs: &[HistoryDocument],
    readings: &[Vec<usize>],
) -> Answered {
    let options: Vec<String> = readings
        .iter()
        .filter_map(|r| r.first().map(|&i| docs[i].title.trim().to_owned()))
        .collect();
    Answered {
        payload: Payload::Elicitation {
            elicitation: Elicitation {
                text: format!(
                    "\"{}\" fits pages about different things you have read: {}.",
                    prefix_chars(question.trim(), 100),
                    options
                        .iter()
                        .map(|o| format!("\u{201c}{o}\u{201d}"))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
                questions: vec![Question {
                    id: "sense".into(),
                    text: "Which one do you mean? Ask again with it as context.text.".into(),
                    question_type: QuestionType::SingleSelect,
                    options,
                }],
            },
        },
        conversation_id: None,
    }
}

/// The schema.org type of a stored turn's result.
fn doc_type(d: &HistoryDocument) -> String {
    page_type(d.url.as_ref(), "Conversation")
}

/// Whether a result of type `have` answers `itemType` `want`: the same
/// type, or one of its supertypes (schema.org: both are CreativeWorks,
/// everything is a Thing); letter case aside.
fn is_a(have: &str, want: &str) -> bool {
    let want = want.strip_prefix("schema:").unwrap_or(want);
    ["Thing", "CreativeWork", have]
        .iter()
        .any(|t| t.eq_ignore_ascii_case(want))
}

/// `query`'s extra fields that filter: each string or number must be
/// mentioned by a document.
fn filter_values(filters: &Map<String, Value>) -> Vec<String> {
    filters
        .values()
        .filter_map(|v| match v {
            Value::String(s) => Some(s.trim().to_lowercase()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
        .filter(|s| !s.is_empty())
        .collect()
}

fn mentions(doc: &HistoryDocument, needle: &str) -> bool {
    [&doc.title, &doc.user_text, &doc.answer_text, &doc.page_text]
        .iter()
        .any(|t| t.to_lowercase().contains(needle))
}

/// The retrieved turns as one observation: an empty summary (a page of
/// its own would be quoted as if it were a source) and one chunk per turn,
/// so a citation's chunk names its source.
fn observation(query: &str, docs: &[HistoryDocument]) -> Observation {
    let count = u32::try_from(docs.len()).unwrap_or(u32::MAX);
    Observation {
        summary: Summary {
            doc_type: SUMMARY_DOC_TYPE.into(),
            url: HISTORY_URL.into(),
            title: prefix_chars(query, 200).to_owned(),
            text: String::new(),
            ..Summary::default()
        },
        chunks: docs
            .iter()
            .zip(1..)
            .map(|(d, index)| Chunk {
                doc_type: CHUNK_DOC_TYPE.into(),
                url: d.url.clone().unwrap_or_else(|| HISTORY_URL.into()),
                title: d.title.clone(),
                chunk_index: index,
                chunk_count: count,
                text: [&d.title, &d.user_text, &d.answer_text, &d.page_text]
                    .iter()
                    .filter(|t| !t.trim().is_empty())
                    .map(|t| t.as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
            })
            .collect(),
        ..Observation::default()
    }
}

/// Keeps the events of one turn.
#[derive(Default)]
struct Events(Mutex<Vec<Event>>);

impl Sink for Events {
    fn emit(&self, _reply_to: Option<&RequestId>, event: Event) {
        match self.0.lock() {
            Ok(mut events) => events.push(event),
            Err(poisoned) => poisoned.into_inner().push(event),
        }
    }
}

fn run_engine(
    request: &AskRequest,
    docs: &[HistoryDocument],
    (conversation, collection_id): (ConversationId, Option<CollectionId>),
    ctx: &AskContext<'_>,
) -> Answered {
    let over_collection = collection_id.is_some();
    let text = request.query.text.clone();
    let observation = match serde_json::to_value(observation(&text, docs)) {
        Ok(v) => v,
        Err(e) => {
            return Failure::new(
                FailureCode::InternalError,
                format!("the documents could not be prepared: {e}"),
            )
            .into()
        }
    };
    let turn_request = TurnRequest {
        id: laika_core::ambient::Ambient::new_id(&laika_runtime::SystemAmbient).into(),
        conversation_id: Some(conversation),
        message: UserText { text: text.clone() },
        task: Task {
            name: match request.prefer.mode {
                Mode::Summarize => TaskName::Summarize,
                Mode::List | Mode::Generate => TaskName::Answer,
            },
            args: task_args(request),
        },
        tab: Tab::default(),
        observation: Deferred::new(observation),
        collection_id,
        offline: false,
        // An HTTP client asks to know; nothing it asks changes anything.
        mode: Some(laika_protocol::mode::Mode::Inform),
        // Nobody is there to approve a plan.
        plans: false,
    };
    // One answer, no tools: nobody is there to run a browser tool.
    let mut config = ctx.config.clone();
    config.limits.max_steps = 1;
    config.limits.max_tool_calls = 0;
    let events = Events::default();
    turn::run(
        turn_request,
        &TurnContext {
            config: &config,
            runtime: ctx.runtime,
            store: ctx.store,
            cancel: ctx.cancel,
            inbox: ctx.inbox,
            sink: &events,
            // Asks run over stored text with the runtime's fixed budget
            // unless the config names a window (no probe on this path).
            context_window: ctx.config.configured_window(),
            page_indexes: None,
            regime: Default::default(),
            mcp: crate::mcp_client::McpHub::none(),
            call_time: None,
        },
    );
    let events = match events.0.into_inner() {
        Ok(e) => e,
        Err(p) => p.into_inner(),
    };
    let mut conversation_id = None;
    let mut answer = None;
    let mut error = None;
    for event in events {
        match event {
            Event::TurnStarted(s) => conversation_id = Some(s.conversation_id),
            Event::Assistant(a) => answer = Some(a),
            Event::Error(e) => error = Some(e),
            _ => {}
        }
    }
    let payload = match (answer, error) {
        (Some(a), _) => {
            let render = serde_json::to_value(&a.render).unwrap_or(Value::Null);
            let answer_text = laika_core::render::plain_text(&render);
            let mut results = if over_collection {
                collection_results(&text, &answer_text, &a.citations, ctx.store)
            } else {
                results(&text, &answer_text, &a.citations, docs)
            };
            if let (Some(first), Some(id)) = (results.first_mut(), &conversation_id) {
                if request.prefer.mode == Mode::Summarize {
                    first.result_type = "Summary".into();
                }
                first.actions.push(continue_in_sidebar(id, None));
            }
            Payload::answer(request.prefer.response_format, answer_text, results)
        }
        (None, Some(e)) => {
            let code = match e.code {
                ErrorCode::InvalidRequest => FailureCode::InvalidRequest,
                _ => FailureCode::InternalError,
            };
            Failure::new(code, e.message).into()
        }
        (None, None) => Failure::new(
            FailureCode::InternalError,
            "the turn ended without an answer",
        )
        .into(),
    };
    Answered {
        payload,
        conversation_id,
    }
}

/// The document a verified citation was found in.
fn cited_document<'d>(doc_id: &str, docs: &'d [HistoryDocument]) -> Option<&'d HistoryDocument> {
    let n: usize = doc_id.strip_prefix(CHUNK_DOC_PREFIX)?.parse().ok()?;
    docs.get(n.checked_sub(1)?)
}

/// The answer first (schema.org `Answer`), then each page it was drawn
/// from (`WebPage`), every one with its sources and verified quotes.
fn results(
    question: &str,
    answer: &str,
    citations: &[laika_protocol::citation::VerifiedCitation],
    docs: &[HistoryDocument],
) -> Vec<ResultObject> {
    let verified: Vec<(GroundingCitation, Option<usize>)> = citations
        .iter()
        .filter(|c| c.verified)
        .map(|c| {
            let doc = cited_document(&c.doc_id, docs);
            let index = doc.and_then(|d| docs.iter().position(|x| std::ptr::eq(x, d)));
            (
                GroundingCitation {
                    quote: c.quote.clone(),
                    url: doc.and_then(|d| d.url.clone()),
                    verified: true,
                },
                index,
            )
        })
        .collect();
    let mut out = vec![answer_result(question, answer, &verified)];
    out.extend(page_results(docs, &verified));
    out
}

/// One result per stored turn an answer is drawn from, with the verified
/// quotes found in it (`verified` pairs a quote with its document's index).
fn page_results(
    docs: &[HistoryDocument],
    verified: &[(GroundingCitation, Option<usize>)],
) -> Vec<ResultObject> {
    docs.iter()
        .enumerate()
        .map(|(i, d)| {
            let summary = if d.answer_text.trim().is_empty() {
                &d.page_text
            } else {
                &d.answer_text
            };
            let mut actions: Vec<Action> = open_page(d.url.as_deref()).into_iter().collect();
            actions.push(continue_in_sidebar(&d.conversation_id, Some(d.turn)));
            ResultObject {
                result_type: doc_type(d),
                name: if d.title.trim().is_empty() {
                    prefix_chars(&d.user_text, 120).to_owned()
                } else {
                    d.title.clone()
                },
                url: d.url.clone(),
                description: prefix_chars(summary.trim(), DESCRIPTION_CHARS).to_owned(),
                grounding: Grounding {
                    source_urls: d.url.iter().cloned().collect(),
                    citations: verified
                        .iter()
                        .filter(|(_, at)| *at == Some(i))
                        .map(|(c, _)| c.clone())
                        .collect(),
                },
                actions,
                extra: identified(
                    format!("{}#{}", d.conversation_id, d.turn),
                    Some(d.created_at.clone()),
                ),
            }
        })
        .collect()
}

/// Opening the page in a browser, for a web address.
fn open_page(url: Option<&str>) -> Option<Action> {
    let url = url?;
    let parsed = url::Url::parse(url).ok()?;
    matches!(parsed.scheme(), "http" | "https").then(|| Action {
        context: SCHEMA_ORG,
        action_type: "ViewAction",
        name: "open_page",
        description: "Open the page in a browser".into(),
        protocol: "HTTP",
        method: Some("GET"),
        endpoint: url.to_owned(),
        params: Map::new(),
    })
}

/// Continuing the conversation in Laika's sidebar (its history lists it;
/// `laika-host history show` prints it).
fn continue_in_sidebar(conversation: &ConversationId, turn: Option<u32>) -> Action {
    let mut params = Map::new();
    params.insert(
        "conversation_id".into(),
        Value::String(conversation.to_string()),
    );
    if let Some(turn) = turn {
        params.insert("turn".into(), Value::from(turn));
    }
    Action {
        context: SCHEMA_ORG,
        action_type: "ResumeAction",
        name: "continue_in_sidebar",
        description: "Continue this conversation in Laika's sidebar".into(),
        protocol: "laika",
        method: None,
        endpoint: format!("laika:conversation/{conversation}"),
        params,
    }
}

/// The engine task's arguments: the question, and what decontextualizes it
/// (the queries before, the context's text, the caller's memory), and the
/// language to answer in.
fn task_args(request: &AskRequest) -> Map<String, Value> {
    let mut args = Map::new();
    args.insert("question".into(), Value::String(request.query.text.clone()));
    let context = &request.context;
    if !context.prev.is_empty() {
        args.insert("previous_queries".into(), Value::from(context.prev.clone()));
    }
    if let Some(text) = context.text.as_deref().filter(|t| !t.trim().is_empty()) {
        args.insert("context".into(), Value::String(text.to_owned()));
    }
    if !context.memory.is_empty() {
        args.insert("memory".into(), Value::from(context.memory.clone()));
    }
    if let Some(language) = request.prefer.language() {
        args.insert("language".into(), Value::String(language));
    }
    args
}

/// The answer first (schema.org `Answer`), then each collection source a
/// verified citation names (`WebPage` for a page, `CreativeWork` for a
/// note), every one with its URL and verified quotes.
fn collection_results(
    question: &str,
    answer: &str,
    citations: &[laika_protocol::citation::VerifiedCitation],
    store: &Mutex<Store>,
) -> Vec<ResultObject> {
    let verified: Vec<(GroundingCitation, &CitedSource)> = citations
        .iter()
        .filter(|c| c.verified)
        .filter_map(|c| {
            let source = c.source.as_ref()?;
            Some((
                GroundingCitation {
                    quote: c.quote.clone(),
                    url: source.url.clone(),
                    verified: true,
                },
                source,
            ))
        })
        .collect();
    let mut cited: Vec<&CitedSource> = Vec::new();
    for (_, source) in &verified {
        if !cited.iter().any(|c| c.source_id == source.source_id) {
            cited.push(source);
        }
    }
    // A source deleted since the turn read it keeps its citation, without
    // a description.
    let stored: Vec<Option<Source>> = match store.lock() {
        Ok(store) => cited
            .iter()
            .map(|c| store.source(&c.source_id).ok())
            .collect(),
        Err(_) => cited.iter().map(|_| None).collect(),
    };
    let mut out = vec![answer_result(question, answer, &verified)];
    for (source, stored) in cited.iter().zip(stored) {
        let extra = identified(
            source.source_id.to_string(),
            stored.as_ref().and_then(|s| s.captured_at.clone()),
        );
        out.push(ResultObject {
            result_type: page_type(source.url.as_ref(), "CreativeWork"),
            name: source.title.clone(),
            url: source.url.clone(),
            description: stored
                .map(|s| prefix_chars(s.text.trim(), DESCRIPTION_CHARS).to_owned())
                .unwrap_or_default(),
            grounding: Grounding {
                source_urls: source.url.iter().cloned().collect(),
                citations: verified
                    .iter()
                    .filter(|(_, s)| s.source_id == source.source_id)
                    .map(|(c, _)| c.clone())
                    .collect(),
            },
            actions: open_page(source.url.as_deref()).into_iter().collect(),
            extra,
        });
    }
    out
}

/// The `Answer` result: the quotes verified, and the URLs they came from
/// (each once, in the order first quoted).
fn answer_result<T>(
    question: &str,
    answer: &str,
    verified: &[(GroundingCitation, T)],
) -> ResultObject {
    let mut source_urls: Vec<String> = Vec::new();
    for url in verified.iter().filter_map(|(c, _)| c.url.as_ref()) {
        if !source_urls.contains(url) {
            source_urls.push(url.clone());
        }
    }
    ResultObject {
        result_type: "Answer".into(),
        name: question.to_owned(),
        url: None,
        description: answer.to_owned(),
        grounding: Grounding {
            source_urls,
            citations: verified.iter().map(|(c, _)| c.clone()).collect(),
        },
        actions: Vec::new(),
        extra: Map::new(),
    }
}

/// `WebPage` for what has a URL, else `without_url`.
fn page_type(url: Option<&String>, without_url: &str) -> String {
    if url.is_some() {
        "WebPage"
    } else {
        without_url
    }
    .into()
}

/// A result's `identifier`, and its `dateCreated` when known.
fn identified(identifier: String, created: Option<String>) -> Map<String, Value> {
    let mut extra = Map::new();
    extra.insert("identifier".into(), Value::String(identifier));
    if let Some(created) = created {
        extra.insert("dateCreated".into(), Value::String(created));
    }
    extra
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origins(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn site_resolves_to_history_a_domain_a_choice_or_nothing() {
        let o = origins(&[
            "https://docs.example.com",
            "https://example.com",
            "https://example.org",
            "https://news.site.net",
        ]);
        assert_eq!(resolve(None, &o, &[]), Scope::History(None));
        assert_eq!(resolve(Some(" History "), &o, &[]), Scope::History(None));
        assert_eq!(
            resolve(Some("https://www.Example.com/a"), &o, &[]),
            Scope::History(Some(origins(&[
                "https://docs.example.com",
                "https://example.com"
            ])))
        );
        assert_eq!(
            resolve(Some("site"), &o, &[]),
            Scope::History(Some(origins(&["https://news.site.net"])))
        );
        assert_eq!(
            resolve(Some("example"), &o, &[]),
            Scope::Choose(
                ["docs.example.com", "example.com", "example.org"]
                    .map(|h| Choice {
                        option: h.into(),
                        label: format!("the site {h}"),
                    })
                    .to_vec()
            )
        );
        assert_eq!(resolve(Some("recipes"), &o, &[]), Scope::Unknown);
    }

    #[test]
    fn site_resolves_to_a_collection_by_id_or_title_or_asks_which() {
        let o = origins(&["https://example.com", "https://recipes.example.org"]);
        let c = |id: &str, title: &str| Collection {
            id: id.into(),
            title: title.into(),
            tags: Vec::new(),
            created_at: "t".into(),
            source_count: 0,
        };
        let cs = [
            c("col-1", "Trip to Prague"),
            c("col-2", "Recettes d'été"),
            c("col-3", "RECETTES D'ÉTÉ"),
            c("col-4", "example.com"),
        ];
        assert_eq!(
            resolve(Some(" trip TO prague "), &o, &cs),
            Scope::Collection("col-1".into())
        );
        assert_eq!(
            resolve(Some("col-3"), &o, &cs),
            Scope::Collection("col-3".into())
        );
        let Scope::Choose(both) = resolve(Some("recettes d'Été"), &o, &cs) else {
            panic!("two collections share the title");
        };
        assert_eq!(
            both.iter().map(|c| c.option.as_str()).collect::<Vec<_>>(),
            ["col-2", "col-3"]
        );
        assert!(both[0].label.contains("Recettes d'été"));
        // A collection and a site by the same name: each option is exact.
        let Scope::Choose(mixed) = resolve(Some("example.com"), &o, &cs) else {
            panic!("a collection and a site share the name");
        };
        let options: Vec<&str> = mixed.iter().map(|c| c.option.as_str()).collect();
        assert_eq!(options, ["col-4", "https://example.com"]);
        assert_eq!(
            resolve(Some(options[1]), &o, &cs),
            Scope::History(Some(origins(&["https://example.com"])))
        );
        assert_eq!(
            resolve(Some("recipes"), &o, &cs),
            Scope::History(Some(origins(&["https://recipes.example.org"])))
        );
        assert_eq!(resolve(Some("nothing"), &o, &cs), Scope::Unknown);
    }

    #[test]
    fn citations_map_to_the_chunk_they_were_found_in() {
        let doc = |url: &str| HistoryDocument {
            conversation_id: "c".into(),
            turn: 1,
            created_at: "t".into(),
            url: Some(url.into()),
            origin: None,
            title: "T".into(),
            user_text: "q".into(),
            answer_text: "a".into(),
            page_text: String::new(),
            score: 1.0,
        };
        let docs = [doc("https://a.example/"), doc("https://b.example/")];
        let cite = |doc_id: &str, verified| laika_protocol::citation::VerifiedCitation {
            doc_id: doc_id.into(),
            node_id: None,
            handle_id: None,
            quote: "quoted words".into(),
            verified,
            source: None,
        };
        let r = results(
            "q",
            "answer",
            &[
                cite("doc:web:chunk:2", true),
                cite("doc:web:chunk:1", false),
            ],
            &docs,
        );
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].grounding.source_urls, ["https://b.example/"]);
        assert_eq!(r[0].grounding.citations.len(), 1);
        assert!(r[1].grounding.citations.is_empty());
        assert_eq!(r[2].grounding.citations.len(), 1);
        assert_eq!(r[2].grounding.source_urls, ["https://b.example/"]);
        assert_eq!(cited_document("doc:web:chunk:0", &docs), None);
        assert_eq!(cited_document("doc:web:summary", &docs), None);
    }
}
