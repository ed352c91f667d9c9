//! `laika-host serve`: NLWeb v0.54 over HTTP, so a person's own programs can
//! ask what Laika has read (`docs/nlweb.md`).
//!
//! - `nlweb`: the protocol's types and request parsing (v0.54's field names).
//! - `guard`: the bearer token, `Host` and `Origin` checks.
//! - `answer`: one ask over the history, through the same engine and runtime
//!   as a sidebar turn.
//! - `asks`: starting asks, waiting or promising, `/await`: the part an MCP
//!   binding shares.
//! - `jobs`: running asks and the Promises made for them.
//!
//! Each connection is served by hyper directly (not `axum::serve`) so its
//! header read has a deadline; bodies have a size limit and a deadline too.
//! Blocking work (the store, the engine, the runtime) runs on tokio's
//! blocking pool, never on the async workers.

pub mod answer;
pub mod asks;
pub mod guard;
pub mod jobs;
pub mod nlweb;
pub mod senses;

use crate::config::Config;
use crate::store::Store;
use asks::{Asks, Waited};
use axum::body::Body;
use axum::extract::{RawQuery, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::routing::{get, post};
use axum::Router;
use guard::{Hosts, Token};
use jobs::CancelOnDrop;
use laika_core::runtime::Runtime;
use laika_protocol::error::{Error, Result};
use nlweb::{AskRequest, Failure, FailureCode, Payload, Response, ResponseFormat, ResultObject};
use serde_json::{Map, Value};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// SSE keep-alive comments: they also reveal a client that left.
const SSE_KEEP_ALIVE: Duration = Duration::from_secs(1);

struct ServerState {
    asks: Arc<Asks>,
    token: Token,
    hosts: Hosts,
}

type Shared = Arc<ServerState>;

/// A bound server, not yet accepting.
pub struct Server {
    pub addr: SocketAddr,
    listener: TcpListener,
    state: Shared,
}

impl Server {
    /// Binds the configured address (`serve.listen`, already validated).
    pub async fn bind(
        config: Config,
        store: Store,
        runtime: Arc<dyn Runtime>,
        token: Token,
    ) -> Result<Server> {
        let wanted = config.serve.listen_addr()?;
        let listener = TcpListener::bind(wanted)
            .await
            .map_err(|e| Error::internal(format!("cannot listen on {wanted}: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::internal(format!("the listening address: {e}")))?;
        let hosts = Hosts::new(addr, &config.serve.allowed_hosts);
        Ok(Server {
            addr,
            listener,
            state: Arc::new(ServerState {
                asks: Asks::new(config, store, runtime),
                token,
                hosts,
            }),
        })
    }

    /// Accepts connections until the process ends.
    pub async fn run(self) -> Result<()> {
        let app = router(self.state.clone());
        let serve = &self.state.asks.config.serve;
        let connections = Arc::new(Semaphore::new(serve.max_connections));
        let read_timeout = Duration::from_millis(serve.read_timeout_ms);
        loop {
            let Ok(permit) = connections.clone().acquire_owned().await else {
                return Ok(());
            };
            let stream = match self.listener.accept().await {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: wait, then go on.
                    tracing::warn!("serve: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let service = hyper_util::service::TowerToHyperService::new(app.clone());
            tokio::spawn(async move {
                let connection = hyper::server::conn::http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(read_timeout)
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
                if let Err(e) = connection.await {
                    tracing::debug!("serve: connection ended: {e}");
                }
                drop(permit);
            });
        }
    }
}

fn router(state: Shared) -> Router {
    Router::new()
        .route("/ask", get(ask_get).post(ask_post))
        .route("/await", post(await_post))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(state.clone(), check_caller))
        .with_state(state)
}

// ------------------------------------------------------------- responses

fn json_response(response: &Response, status: u16) -> HttpResponse {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, axum::Json(response.to_json())).into_response()
}

fn failure(code: FailureCode, message: impl Into<String>) -> HttpResponse {
    failure_with_status(code.status(), code, message)
}

fn failure_with_status(status: u16, code: FailureCode, message: impl Into<String>) -> HttpResponse {
    json_response(&Response::failure(Failure::new(code, message)), status)
}

async fn not_found() -> HttpResponse {
    failure_with_status(
        404,
        FailureCode::InvalidRequest,
        "no such endpoint: use /ask or /await",
    )
}

// ---------------------------------------------------------------- guard

/// Host, then Origin, then the token: a request from a web page is refused
/// whatever it carries.
async fn check_caller(State(state): State<Shared>, request: Request, next: Next) -> HttpResponse {
    let headers = request.headers();
    let text = |name| {
        headers
            .get(name)
            .map(|v: &HeaderValue| v.to_str().unwrap_or("\u{0}"))
    };
    if !state.hosts.accepts_host(text(header::HOST)) {
        return failure_with_status(
            403,
            FailureCode::Unauthorized,
            "the Host header does not name this server",
        );
    }
    if !state.hosts.accepts_origin(text(header::ORIGIN)) {
        return failure_with_status(
            403,
            FailureCode::Unauthorized,
            "requests from web pages are refused (their Origin is not this server)",
        );
    }
    let authorization = headers
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes);
    if !state.token.accepts(authorization) {
        let mut refused = failure(
            FailureCode::Unauthorized,
            "a bearer token is required: Authorization: Bearer <token> (see laika-host serve's output for where it is kept)",
        );
        refused
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return refused;
    }
    next.run(request).await
}

/// The JSON body, bounded in size and in time. `None` when empty.
async fn read_body(
    state: &ServerState,
    headers: &HeaderMap,
    body: Body,
) -> std::result::Result<Option<Value>, HttpResponse> {
    let limit = state.asks.config.serve.max_body_bytes;
    let too_large = || {
        failure_with_status(
            413,
            FailureCode::InvalidRequest,
            format!("the request body is larger than {limit} bytes"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let deadline = Duration::from_millis(state.asks.config.serve.read_timeout_ms);
    let bytes = match tokio::time::timeout(deadline, axum::body::to_bytes(body, limit)).await {
        Err(_) => {
            return Err(failure_with_status(
                408,
                FailureCode::InvalidRequest,
                "the request body did not arrive in time",
            ))
        }
        Ok(Err(_)) => return Err(too_large()),
        Ok(Ok(bytes)) => bytes,
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        failure(
            FailureCode::InvalidRequest,
            format!("the body is not JSON: {e}"),
        )
    })
}

fn params(query: Option<String>) -> Map<String, Value> {
    let pairs = url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .into_owned()
        .collect::<Vec<_>>();
    nlweb::params_to_object(pairs)
}

// ------------------------------------------------------------------ /ask

async fn ask_get(State(state): State<Shared>, RawQuery(query): RawQuery) -> HttpResponse {
    ask(state, params(query)).await
}

async fn ask_post(
    State(state): State<Shared>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Body,
) -> HttpResponse {
    let body = match read_body(&state, &headers, body).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    match nlweb::merge(params(query), body) {
        Ok(object) => ask(state, object).await,
        Err(f) => failure(f.0.code, f.0.message),
    }
}

async fn ask(state: Shared, object: Map<String, Value>) -> HttpResponse {
    let request = match nlweb::parse_ask(object) {
        Ok(request) => request,
        Err(f) => return failure(f.0.code, f.0.message),
    };
    if request.prefer.streaming {
        stream(state, request)
    } else {
        let (response, status) = state.asks.respond(request).await;
        json_response(&response, status)
    }
}

// ------------------------------------------------------------------- SSE

/// The response as SSE events, each a whole JSON object: `_meta` first,
/// then the content and one event per result, or the elicitation, promise
/// or error.
fn sse_events(response: &Response) -> Vec<Value> {
    let mut events = vec![one("_meta", to_json(&response.meta))];
    match &response.payload {
        Payload::Results { results } => {
            events.extend(
                results
                    .iter()
                    .map(|r| result_event(ResponseFormat::ConvSearch, r)),
            );
        }
        Payload::ChatgptApp {
            content,
            structured_data,
        } => {
            events.push(one(
                "content",
                Value::Array(content.iter().map(to_json).collect()),
            ));
            events.extend(
                structured_data
                    .results
                    .iter()
                    .map(|r| result_event(ResponseFormat::ChatgptApp, r)),
            );
        }
        Payload::Elicitation { elicitation } => {
            events.push(one("elicitation", to_json(elicitation)))
        }
        Payload::Promise { promise } => events.push(one("promise", to_json(promise))),
        Payload::Failure { error } => events.push(one("error", to_json(error))),
    }
    events
}

/// `{key: value}`.
fn one(key: &str, value: Value) -> Value {
    let mut m = Map::new();
    m.insert(key.to_owned(), value);
    Value::Object(m)
}

/// One result's event: `{"results": [r]}`, or under `structuredData` for
/// `chatgpt_app`.
fn result_event(format: ResponseFormat, result: &ResultObject) -> Value {
    let results = one("results", Value::Array(vec![to_json(result)]));
    match format {
        ResponseFormat::ConvSearch => results,
        ResponseFormat::ChatgptApp => one("structuredData", results),
    }
}

/// Plain data as JSON: serialization cannot fail.
fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// Streams the ask's response: `_meta` and the pages as soon as they are
/// retrieved, the answer when the model is done. A client that leaves
/// before the answer cancels the work (unless it was promised); an ask that
/// has sent nothing by `serve.promise_after_ms` becomes a Promise.
fn stream(state: Shared, request: AskRequest) -> HttpResponse {
    let (tx, rx) = tokio::sync::mpsc::channel::<Value>(16);
    tokio::spawn(async move {
        let session = request.meta.session_context.clone();
        let format = request.prefer.response_format;
        let job = state.asks.start(request);
        let mut guard = CancelOnDrop::new(job.clone());
        let after = Duration::from_millis(state.asks.config.serve.promise_after_ms);
        let early = if after.is_zero() {
            Err(())
        } else {
            tokio::select! {
                early = tokio::time::timeout(after, job.wait_early()) => early.map_err(|_| ()),
                () = tx.closed() => return,
            }
        };
        let response = match early {
            Ok(Some(early)) => {
                let mut session = session.unwrap_or_default();
                session.conversation_id = Some(early.conversation_id.to_string());
                let meta = Response::new(
                    Payload::answer(format, String::new(), Vec::new()),
                    Some(format),
                    Some(session),
                )
                .meta;
                let mut sent = vec![one("_meta", to_json(&meta))];
                sent.extend(early.results.iter().map(|r| result_event(format, r)));
                for event in sent {
                    if tx.send(event).await.is_err() {
                        return;
                    }
                }
                let done = tokio::select! {
                    done = job.wait() => done,
                    () = tx.closed() => return,
                };
                guard.disarm();
                let response = done.map_or_else(|| asks::lost().0, |f| f.0.clone());
                for event in rest_events(&response, &early.results) {
                    if tx.send(event).await.is_err() {
                        return;
                    }
                }
                return;
            }
            // The job ended without early results: its answer is all (it
            // is published just after the early channel closes).
            Ok(None) => {
                let done = tokio::select! {
                    done = job.wait() => done,
                    () = tx.closed() => return,
                };
                done.map_or_else(|| asks::lost().0, |f| f.0.clone())
            }
            Err(()) => match state.asks.promise(&job) {
                Waited::Promised {
                    token,
                    estimated_time,
                } => asks::promised(token, estimated_time, false, session),
                Waited::Done(finished) => finished.0.clone(),
                Waited::Lost => asks::lost().0,
            },
        };
        guard.disarm();
        for event in sse_events(&response) {
            if tx.send(event).await.is_err() {
                return;
            }
        }
    });
    let events = futures_util::stream::unfold(rx, |mut rx| async move {
        let event = rx.recv().await?;
        Some((
            Ok::<_, Infallible>(SseEvent::default().data(event.to_string())),
            rx,
        ))
    });
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(SSE_KEEP_ALIVE))
        .into_response()
}

/// What is left to send of `response` once `_meta` and the `early`
/// results went out: the answer's text (`chatgpt_app`) and the results not
/// sent yet (the answer itself); a Failure as its `error`.
fn rest_events(response: &Response, early: &[ResultObject]) -> Vec<Value> {
    let identifier = |r: &ResultObject| r.extra.get("identifier").cloned();
    let unsent = |results: &[ResultObject]| -> Vec<ResultObject> {
        results
            .iter()
            .filter(|r| {
                identifier(r)
                    .is_none_or(|id| !early.iter().any(|e| identifier(e).as_ref() == Some(&id)))
            })
            .cloned()
            .collect()
    };
    match &response.payload {
        Payload::Results { results } => unsent(results)
            .iter()
            .map(|r| result_event(ResponseFormat::ConvSearch, r))
            .collect(),
        Payload::ChatgptApp {
            content,
            structured_data,
        } => std::iter::once(one(
            "content",
            Value::Array(content.iter().map(to_json).collect()),
        ))
        .chain(
            unsent(&structured_data.results)
                .iter()
                .map(|r| result_event(ResponseFormat::ChatgptApp, r)),
        )
        .collect(),
        // Only a Failure can follow results; should anything else, its
        // object is sent as it is.
        _ => sse_events(response).into_iter().skip(1).collect(),
    }
}

// ---------------------------------------------------------------- /await

async fn await_post(State(state): State<Shared>, headers: HeaderMap, body: Body) -> HttpResponse {
    let body = match read_body(&state, &headers, body).await {
        Ok(Some(body)) => body,
        Ok(None) => Value::Object(Map::new()),
        Err(refused) => return refused,
    };
    let (response, status) = state.asks.await_promise(body);
    json_response(&response, status)
}
