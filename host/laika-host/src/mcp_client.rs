//! The MCP client: the tools of the MCP servers the user configured under
//! `[mcp.servers.<name>]`, offered to the model as `mcp.<server>.<tool>`
//! (laika-core's `tools::McpTools`) and called by the host, with the
//! official Rust MCP SDK (`rmcp`), the one `laika-host mcp` serves with.
//!
//! A server is a program started over stdio (`command`) or an MCP endpoint
//! on this machine (`url`, loopback only: a remote endpoint would receive
//! the conversation's data over the network, and a loopback one is what a
//! local tool server listens on). The hub connects on first use, lists the
//! tools, and keeps the connection; a server that fails is tried again
//! after [`RETRY_AFTER`] or on Settings' "Test connection".
//!
//! What a server does is bounded: connecting and each call have timeouts,
//! a message larger than the output cap closes the connection before it is
//! read whole (stdio), and a result over the cap is refused. Errors are
//! coded (`MCP_UNAVAILABLE`, `MCP_TIMEOUT`, `MCP_OUTPUT_TOO_LARGE`,
//! `MCP_TOOL_ERROR`, `INVALID_ARGUMENTS`, `CANCELLED`); a dead or hostile
//! server fails the call, never the turn. Results are untrusted data: they
//! reach the model as a tool result, which the turn's provenance records.

use laika_core::cancel::CancelToken;
use laika_core::text::prefix_chars;
use laika_core::tools::{McpListing, McpTools};
use laika_protocol::agent::ToolError;
use laika_protocol::error::{Error, ErrorCode, Result};
use laika_protocol::event::{McpServerState, McpServerView, McpToolView};
use laika_protocol::tool_call::McpCall;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, ResourceContents};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, ReadBuf};

/// Default for `connect_timeout_ms`: starting a program and listing its tools.
pub const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 10_000;
/// Default for `timeout_ms`: one call.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// Default for `max_output_bytes`: a result goes back to the model, so it is
/// kept small (like an integration's).
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 256 << 10;
/// The timeouts' range, in ms.
const TIMEOUT_RANGE: std::ops::RangeInclusive<u64> = 100..=600_000;
/// The output cap's range, in bytes.
const OUTPUT_RANGE: std::ops::RangeInclusive<usize> = 1024..=(8 << 20);
/// A server that failed is connected again on use after this long.
pub const RETRY_AFTER: Duration = Duration::from_secs(30);
/// The `[mcp]` table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpConfig {
    /// `[mcp.servers.<name>]`; none by default.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub servers: BTreeMap<String, McpServerConfig>,
}

impl McpConfig {
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    pub fn validate(&self) -> Result<()> {
        self.servers
            .iter()
            .try_for_each(|(name, server)| server.validate(name))
    }
}

/// One `[mcp.servers.<name>]` table: exactly one of `command` and `url`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpServerConfig {
    /// A program speaking MCP over stdio: an absolute path or a name in PATH.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<PathBuf>,
    /// Its arguments, passed as is (no shell).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Extra environment variables for the program.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// A streamable-HTTP MCP endpoint on loopback (`http://127.0.0.1:PORT/mcp`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The user trusts the server: its tools that say they only read
    /// (`readOnlyHint`) run without a question.
    pub trusted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_timeout_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_bytes: Option<usize>,
}

impl McpServerConfig {
    fn connect_timeout(&self) -> Duration {
        Duration::from_millis(
            self.connect_timeout_ms
                .unwrap_or(DEFAULT_CONNECT_TIMEOUT_MS),
        )
    }

    fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS))
    }

    fn max_output(&self) -> usize {
        self.max_output_bytes.unwrap_or(DEFAULT_MAX_OUTPUT_BYTES)
    }

    /// The same server, whatever the trust: changing only `trusted` keeps
    /// the connection.
    fn same_endpoint(&self, other: &McpServerConfig) -> bool {
        let untrusted = |c: &McpServerConfig| McpServerConfig {
            trusted: false,
            ..c.clone()
        };
        untrusted(self) == untrusted(other)
    }

    /// Every key's check; errors name `mcp.servers.<name>.<key>`.
    pub fn validate(&self, name: &str) -> Result<()> {
        let at = format!("mcp.servers.{name}");
        if !laika_core::tools::mcp_name(name) {
            return Err(config_error(format!(
                "[mcp.servers.{name:?}]: a server name is 1 to 64 letters, digits, '_' or '-'"
            )));
        }
        match (&self.command, &self.url) {
            (Some(_), Some(_)) | (None, None) => {
                return Err(config_error(format!(
                    "[{at}] needs exactly one of command (a program over stdio) or url (a loopback HTTP endpoint)"
                )))
            }
            (Some(command), None) if command.as_os_str().is_empty() => {
                return Err(config_error(format!("{at}.command is empty")))
            }
            (None, Some(url)) => {
                loopback_url(url).map_err(|why| {
                    config_error(format!("{at}.url {}: {why}", prefix_chars(url, 120)))
                })?;
            }
            (Some(_), None) => {}
        }
        if self.url.is_some() && (!self.args.is_empty() || !self.env.is_empty()) {
            return Err(config_error(format!(
                "{at}: args and env are for a command, not a url"
            )));
        }
        for (key, value) in [
            ("connect_timeout_ms", self.connect_timeout_ms),
            ("timeout_ms", self.timeout_ms),
        ] {
            if value.is_some_and(|v| !TIMEOUT_RANGE.contains(&v)) {
                return Err(config_error(format!(
                    "{at}.{key} must be {}..={} ms",
                    TIMEOUT_RANGE.start(),
                    TIMEOUT_RANGE.end()
                )));
            }
        }
        if self
            .max_output_bytes
            .is_some_and(|v| !OUTPUT_RANGE.contains(&v))
        {
            return Err(config_error(format!(
                "{at}.max_output_bytes must be {}..={} bytes",
                OUTPUT_RANGE.start(),
                OUTPUT_RANGE.end()
            )));
        }
        Ok(())
    }
}

fn config_error(message: String) -> Error {
    Error::new(ErrorCode::ConfigInvalid, message)
}

/// An http URL whose host is a loopback address (or `localhost`).
fn loopback_url(url: &str) -> std::result::Result<url::Url, &'static str> {
    let parsed = url::Url::parse(url).map_err(|_| "is not a URL")?;
    if parsed.scheme() != "http" {
        return Err("must be http:// on loopback (nothing leaves this machine)");
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("must not carry a user name or password");
    }
    let loopback = match parsed.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    if !loopback {
        return Err("is not on loopback (127.0.0.1, ::1 or localhost); a remote MCP server is not supported");
    }
    Ok(parsed)
}

/// The tool error of a failed call or connection.
fn failed(code: &str, message: impl AsRef<str>) -> ToolError {
    ToolError::new(code, prefix_chars(message.as_ref(), 2000))
}

/// A live connection.
struct Connection {
    client: RunningService<RoleClient, ()>,
    tools: Vec<rmcp::model::Tool>,
    /// Set when the server wrote a message over the cap (the connection
    /// is then closed).
    overflow: Arc<AtomicBool>,
    /// The program, killed when the connection is dropped.
    _child: Option<tokio::process::Child>,
}

enum State {
    Idle,
    Connected(Arc<Connection>),
    Failed { error: ToolError, at: Instant },
}

struct Server {
    config: McpServerConfig,
    state: tokio::sync::Mutex<State>,
}

/// The configured servers and their connections. Its methods block; they
/// are called from turn and worker threads, never from async code.
pub struct McpHub {
    runtime: Option<tokio::runtime::Runtime>,
    servers: Mutex<BTreeMap<String, Arc<Server>>>,
}

static NO_SERVERS: McpHub = McpHub {
    runtime: None,
    servers: Mutex::new(BTreeMap::new()),
};

impl McpHub {
    /// A hub without servers, for turns that offer no tools.
    pub fn none() -> &'static McpHub {
        &NO_SERVERS
    }

    /// The hub for `config`; nothing is connected yet.
    pub fn new(config: &McpConfig) -> McpHub {
        let runtime = if config.is_empty() {
            None
        } else {
            new_runtime()
        };
        let hub = McpHub {
            runtime,
            servers: Mutex::new(BTreeMap::new()),
        };
        hub.reconfigure(config);
        hub
    }

    /// Takes a new config: servers whose endpoint changed (or that are gone)
    /// are dropped, their programs stopped; a changed `trusted` keeps the
    /// connection.
    pub fn reconfigure(&self, config: &McpConfig) {
        let Ok(mut servers) = self.servers.lock() else {
            return;
        };
        servers.retain(|name, s| {
            config
                .servers
                .get(name)
                .is_some_and(|c| c.same_endpoint(&s.config))
        });
        for (name, c) in &config.servers {
            match servers.get(name) {
                Some(s) if s.config == *c => {}
                Some(s) => {
                    // Only the trust changed: same connection, new config.
                    let state = s.state.try_lock().ok().and_then(|mut st| match &*st {
                        State::Connected(conn) => {
                            let conn = conn.clone();
                            *st = State::Idle;
                            Some(State::Connected(conn))
                        }
                        _ => None,
                    });
                    servers.insert(
                        name.clone(),
                        Arc::new(Server {
                            config: c.clone(),
                            state: tokio::sync::Mutex::new(state.unwrap_or(State::Idle)),
                        }),
                    );
                }
                None => {
                    servers.insert(
                        name.clone(),
                        Arc::new(Server {
                            config: c.clone(),
                            state: tokio::sync::Mutex::new(State::Idle),
                        }),
                    );
                }
            }
        }
    }

    fn servers(&self) -> Vec<(String, Arc<Server>)> {
        self.servers
            .lock()
            .map(|s| s.iter().map(|(n, s)| (n.clone(), s.clone())).collect())
            .unwrap_or_default()
    }

    fn runtime(&self) -> std::result::Result<&tokio::runtime::Runtime, ToolError> {
        self.runtime
            .as_ref()
            .ok_or_else(|| failed("MCP_UNAVAILABLE", "the MCP client could not start"))
    }

    /// The tools of every server, each connected first if it is not (all
    /// at once, each within its connect timeout, none past a cancel). A
    /// server that cannot be reached offers nothing; Settings tells why.
    pub fn tools(&self, cancel: &CancelToken) -> McpTools {
        let mut tools = McpTools::default();
        let servers = self.servers();
        if servers.is_empty() {
            return tools;
        }
        let Ok(runtime) = self.runtime() else {
            return tools;
        };
        let connected = runtime.block_on(async {
            tokio::select! {
                connected = futures_util::future::join_all(
                    servers
                        .iter()
                        .map(|(name, s)| async move { (name, s, ensure(name, s, false).await) }),
                ) => connected,
                () = cancel.cancelled() => Vec::new(),
            }
        });
        for (name, server, connection) in connected {
            let Ok(connection) = connection else {
                continue;
            };
            for tool in &connection.tools {
                if let Err(why) = tools.add(name, server.config.trusted, listing(tool)) {
                    tracing::warn!(server = %name, tool = %prefix_chars(&tool.name, 64), "MCP tool not offered: {why}");
                }
            }
        }
        tools
    }

    /// Runs `call` (gated and, if asked, approved) on its server.
    pub fn call(
        &self,
        call: &McpCall,
        cancel: &CancelToken,
    ) -> std::result::Result<Value, ToolError> {
        let server = self
            .servers()
            .into_iter()
            .find(|(name, _)| *name == call.server)
            .map(|(_, s)| s)
            .ok_or_else(|| {
                failed(
                    "MCP_UNAVAILABLE",
                    format!(
                        "no MCP server named {:?} is configured",
                        prefix_chars(&call.server, 64)
                    ),
                )
            })?;
        let runtime = self.runtime()?;
        runtime.block_on(async {
            tokio::select! {
                result = call_tool(&call.server, &server, call) => result,
                () = cancel.cancelled() => Err(failed("CANCELLED", "the turn was cancelled")),
            }
        })
    }

    /// What Settings shows: every server, its state and its tools; with
    /// `test`, that server is connected anew first ("Test connection").
    pub fn status(&self, test: Option<&str>) -> Vec<McpServerView> {
        let servers = self.servers();
        let Ok(runtime) = self.runtime() else {
            return servers
                .iter()
                .map(|(name, s)| {
                    view(
                        name,
                        &s.config,
                        Err(failed("MCP_UNAVAILABLE", "the MCP client could not start")),
                    )
                })
                .collect();
        };
        runtime.block_on(futures_util::future::join_all(servers.iter().map(
            |(name, s)| async move {
                let fresh = test == Some(name.as_str());
                let state = ensure(name, s, fresh).await;
                view(name, &s.config, state)
            },
        )))
    }
}

fn new_runtime() -> Option<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("laika-mcp")
        .enable_all()
        .build()
        .map_err(|e| tracing::error!("the MCP client runtime did not start: {e}"))
        .ok()
}

/// The server's connection: the live one, a new one when it is idle (or
/// failed a while ago, or `fresh` asks), else its last failure.
async fn ensure(
    name: &str,
    server: &Server,
    fresh: bool,
) -> std::result::Result<Arc<Connection>, ToolError> {
    let mut state = server.state.lock().await;
    match &*state {
        State::Connected(c) if !fresh && !c.client.is_closed() => return Ok(c.clone()),
        State::Failed { error, at } if !fresh && at.elapsed() < RETRY_AFTER => {
            return Err(error.clone())
        }
        _ => {}
    }
    let started = Instant::now();
    let outcome = match tokio::time::timeout(
        server.config.connect_timeout(),
        connect(&server.config),
    )
    .await
    {
        Ok(outcome) => outcome,
        Err(_) => Err(failed(
            "MCP_TIMEOUT",
            format!(
                "the MCP server {name} did not answer within {} ms",
                server.config.connect_timeout().as_millis()
            ),
        )),
    };
    let ms = started.elapsed().as_millis() as u64;
    match outcome {
        Ok(connection) => {
            tracing::info!(server = %name, tools = connection.tools.len(), ms, "MCP server connected");
            let connection = Arc::new(connection);
            *state = State::Connected(connection.clone());
            Ok(connection)
        }
        Err(error) => {
            tracing::warn!(server = %name, code = %error.code, ms, "MCP server not connected: {}", error.message);
            *state = State::Failed {
                error: error.clone(),
                at: Instant::now(),
            };
            Err(error)
        }
    }
}

async fn connect(config: &McpServerConfig) -> std::result::Result<Connection, ToolError> {
    let overflow = Arc::new(AtomicBool::new(false));
    let (client, child) = match (&config.command, &config.url) {
        (Some(command), _) => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(&config.args)
                // The host's secrets (an API key in `LAIKA_API_KEY`, say) stay
                // out of a server's environment, as out of a plugin's.
                .env_clear()
                .envs(laika_runtime::command::child_env(
                    &|k| std::env::var_os(k),
                    &config.env,
                ))
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .kill_on_drop(true);
            let mut child = cmd.spawn().map_err(|e| {
                failed(
                    "MCP_UNAVAILABLE",
                    format!("cannot start {}: {e}", command.display()),
                )
            })?;
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err(failed(
                    "MCP_UNAVAILABLE",
                    "the program's pipes could not be opened",
                ));
            };
            let reader = Capped {
                inner: stdout,
                line: 0,
                max_line: message_cap(config.max_output()),
                overflow: overflow.clone(),
            };
            let client = ()
                .serve((reader, stdin))
                .await
                .map_err(|e| failed("MCP_UNAVAILABLE", format!("the MCP handshake failed: {e}")))?;
            (client, Some(child))
        }
        (None, Some(url)) => (connect_http(url).await?, None),
        (None, None) => {
            return Err(failed("MCP_UNAVAILABLE", "neither command nor url is set"));
        }
    };
    let tools = client
        .list_all_tools()
        .await
        .map_err(|e| failed("MCP_UNAVAILABLE", format!("listing the tools failed: {e}")))?;
    Ok(Connection {
        client,
        tools,
        overflow,
        _child: child,
    })
}

/// A streamable-HTTP endpoint on loopback, asked without a proxy and
/// without following redirects: nothing of the call leaves this machine.
async fn connect_http(url: &str) -> std::result::Result<RunningService<RoleClient, ()>, ToolError> {
    use rmcp::transport::streamable_http_client::{
        StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
    };
    let url =
        loopback_url(url).map_err(|why| failed("MCP_UNAVAILABLE", format!("the url {why}")))?;
    let http = reqwest_mcp::Client::builder()
        .no_proxy()
        .redirect(reqwest_mcp::redirect::Policy::none())
        .build()
        .map_err(|e| {
            failed(
                "MCP_UNAVAILABLE",
                format!("the HTTP client did not start: {e}"),
            )
        })?;
    let transport = StreamableHttpClientTransport::with_client(
        http,
        StreamableHttpClientTransportConfig::with_uri(url.as_str()),
    );
    ().serve(transport)
        .await
        .map_err(|e| failed("MCP_UNAVAILABLE", format!("the MCP handshake failed: {e}")))
}

/// The longest message a server may write: the cap on a result's text,
/// doubled for JSON's escapes, plus room for the envelope.
fn message_cap(max_output: usize) -> usize {
    max_output.saturating_mul(2).saturating_add(64 << 10)
}

async fn call_tool(
    name: &str,
    server: &Server,
    call: &McpCall,
) -> std::result::Result<Value, ToolError> {
    let connection = ensure(name, server, false).await?;
    let mut params = CallToolRequestParams::new(call.tool.clone());
    params.arguments = Some(call.arguments.clone());
    let timeout = server.config.timeout();
    let answered = tokio::time::timeout(timeout, connection.client.call_tool(params)).await;
    let result = match answered {
        Err(_) => {
            // A late answer must not be taken for the next call's: the
            // connection is dropped and made again on next use.
            *server.state.lock().await = State::Idle;
            return Err(failed(
                "MCP_TIMEOUT",
                format!(
                    "{} did not answer within {} ms",
                    call.name(),
                    timeout.as_millis()
                ),
            ));
        }
        Ok(Err(e)) => {
            let error = if connection.overflow.load(Ordering::Relaxed) {
                too_large(call, server.config.max_output())
            } else {
                match &e {
                    rmcp::ServiceError::McpError(data)
                        if data.code == rmcp::model::ErrorCode::INVALID_PARAMS =>
                    {
                        failed(
                            "INVALID_ARGUMENTS",
                            format!("{}: {}", call.name(), data.message),
                        )
                    }
                    rmcp::ServiceError::McpError(data) => failed(
                        "MCP_TOOL_ERROR",
                        format!("{}: {}", call.name(), data.message),
                    ),
                    other => failed(
                        "MCP_UNAVAILABLE",
                        format!("{}: the server did not answer ({other})", call.name()),
                    ),
                }
            };
            // A closed connection (the program died, or wrote past the cap)
            // is made again on next use: this call's failure is its own.
            if !matches!(e, rmcp::ServiceError::McpError(_)) || connection.client.is_closed() {
                *server.state.lock().await = State::Idle;
            }
            return Err(error);
        }
        Ok(Ok(result)) => result,
    };
    output(call, result, server.config.max_output())
}

fn too_large(call: &McpCall, cap: usize) -> ToolError {
    failed(
        "MCP_OUTPUT_TOO_LARGE",
        format!(
            "{} answered with more than {cap} bytes (max_output_bytes); nothing of it was used",
            call.name()
        ),
    )
}

/// The result as the model reads it: its text, and its structured content
/// when it has one, within the cap.
fn output(
    call: &McpCall,
    result: CallToolResult,
    cap: usize,
) -> std::result::Result<Value, ToolError> {
    let mut texts = Vec::new();
    for block in &result.content {
        texts.push(match block {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { text, .. } => text.clone(),
                ResourceContents::BlobResourceContents { uri, .. } => {
                    format!("[binary resource {} not shown]", prefix_chars(uri, 200))
                }
                _ => "[resource not shown]".into(),
            },
            ContentBlock::Image(_) => "[image not shown]".into(),
            ContentBlock::Audio(_) => "[audio not shown]".into(),
            ContentBlock::ResourceLink(r) => format!("[resource {}]", prefix_chars(&r.uri, 200)),
            _ => "[content not shown]".into(),
        });
    }
    let structured = result.structured_content.unwrap_or(Value::Null);
    let size = texts.iter().map(String::len).sum::<usize>()
        + if structured.is_null() {
            0
        } else {
            structured.to_string().len()
        };
    if size > cap {
        return Err(too_large(call, cap));
    }
    let text = texts.join("\n");
    if result.is_error == Some(true) {
        return Err(failed(
            "MCP_TOOL_ERROR",
            format!("{} failed: {}", call.name(), prefix_chars(&text, 500)),
        ));
    }
    let mut value = json!({
        "message": format!("{} answered.", call.name()),
        "server": call.server,
        "tool": call.tool,
        "text": text,
    });
    if !structured.is_null() {
        value["structured"] = structured;
    }
    Ok(value)
}

fn listing(tool: &rmcp::model::Tool) -> McpListing {
    McpListing {
        name: tool.name.to_string(),
        description: tool.description.as_ref().map(|d| d.to_string()),
        input_schema: Value::Object((*tool.input_schema).clone()),
        read_only: tool
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false),
    }
}

fn view(
    name: &str,
    config: &McpServerConfig,
    state: std::result::Result<Arc<Connection>, ToolError>,
) -> McpServerView {
    let endpoint = match (&config.command, &config.url) {
        (Some(c), _) => c.display().to_string(),
        (None, Some(u)) => u.clone(),
        (None, None) => String::new(),
    };
    let (state, error, tools) = match state {
        Ok(c) => {
            let mut offered = McpTools::default();
            let tools = c
                .tools
                .iter()
                .map(|t| {
                    let l = listing(t);
                    let refused = offered.add(name, config.trusted, l.clone()).err();
                    McpToolView {
                        name: format!("mcp.{name}.{}", prefix_chars(&l.name, 64)),
                        description: l
                            .description
                            .map(|d| prefix_chars(&d, 200).to_owned())
                            .unwrap_or_default(),
                        read_only: l.read_only,
                        offered: refused.is_none(),
                        refused,
                    }
                })
                .collect();
            (McpServerState::Connected, None, tools)
        }
        Err(e) => (McpServerState::Error, Some(e), Vec::new()),
    };
    McpServerView {
        name: name.to_owned(),
        transport: if config.url.is_some() {
            "http"
        } else {
            "stdio"
        }
        .into(),
        endpoint,
        trusted: config.trusted,
        state,
        error: error.map(|e| laika_protocol::event::McpError {
            code: e.code.to_string(),
            message: e.message,
        }),
        tools,
    }
}

/// A reader that fails, and says so, once a line (one MCP message over
/// stdio) grows past `max_line` bytes: a server cannot make the host read
/// an unbounded message.
struct Capped<R> {
    inner: R,
    line: usize,
    max_line: usize,
    overflow: Arc<AtomicBool>,
}

impl<R: AsyncRead + Unpin> AsyncRead for Capped<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let me = &mut *self;
        let polled = Pin::new(&mut me.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            for &b in &buf.filled()[before..] {
                me.line = if b == b'\n' { 0 } else { me.line + 1 };
                if me.line > me.max_line {
                    me.overflow.store(true, Ordering::Relaxed);
                    // A failed read hands over nothing.
                    buf.set_filled(before);
                    return Poll::Ready(Err(std::io::Error::other(
                        "an MCP message was larger than the output cap",
                    )));
                }
            }
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(toml: &str) -> Result<()> {
        let config: McpConfig = toml::from_str(toml).map_err(|e| config_error(e.to_string()))?;
        config.validate()
    }

    #[test]
    fn a_server_is_a_command_or_a_loopback_url_with_bounded_limits() {
        assert!(server("[servers.notes]\ncommand = \"notes-mcp\"").is_ok());
        assert!(
            server("[servers.wiki]\nurl = \"http://127.0.0.1:8811/mcp\"\ntrusted = true").is_ok()
        );
        assert!(server("[servers.wiki]\nurl = \"http://localhost:8811/mcp\"").is_ok());
        assert!(server("[servers.wiki]\nurl = \"http://[::1]:8811/mcp\"").is_ok());
        for bad in [
            "[servers.x]\n",
            "[servers.x]\ncommand = \"a\"\nurl = \"http://127.0.0.1/\"",
            "[servers.x]\nurl = \"http://wiki.example.com/mcp\"",
            "[servers.x]\nurl = \"http://10.0.0.2/mcp\"",
            "[servers.x]\nurl = \"https://127.0.0.1/mcp\"",
            "[servers.x]\nurl = \"http://u:p@127.0.0.1/mcp\"",
            "[servers.x]\nurl = \"http://127.0.0.1/\"\nargs = [\"-v\"]",
            "[servers.\"a.b\"]\ncommand = \"a\"",
            "[servers.x]\ncommand = \"a\"\ntimeout_ms = 0",
            "[servers.x]\ncommand = \"a\"\nconnect_timeout_ms = 9999999",
            "[servers.x]\ncommand = \"a\"\nmax_output_bytes = 10",
        ] {
            let e = server(bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::ConfigInvalid, "{bad}");
            assert!(e.message.contains("mcp.servers"), "{bad}: {}", e.message);
        }
    }

    #[test]
    fn only_the_trust_changed_keeps_the_endpoint() {
        let a = McpServerConfig {
            command: Some("x".into()),
            ..Default::default()
        };
        let trusted = McpServerConfig {
            trusted: true,
            ..a.clone()
        };
        assert!(a.same_endpoint(&trusted));
        let other = McpServerConfig {
            args: vec!["-v".into()],
            ..a.clone()
        };
        assert!(!a.same_endpoint(&other));
    }

    #[tokio::test]
    async fn a_line_past_the_cap_fails_the_read_and_says_so() {
        use tokio::io::AsyncReadExt;
        let overflow = Arc::new(AtomicBool::new(false));
        let data = format!("{}\n{}", "a".repeat(10), "b".repeat(40));
        let mut capped = Capped {
            inner: data.as_bytes(),
            line: 0,
            max_line: 20,
            overflow: overflow.clone(),
        };
        let mut out = Vec::new();
        assert!(capped.read_to_end(&mut out).await.is_err());
        assert!(overflow.load(Ordering::Relaxed));
    }
}
