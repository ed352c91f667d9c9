//! The `laika-host` binary. Browsers launch it with their own arguments (an
//! origin, a manifest path, a window handle…) and speak frames on stdio; people
//! run its subcommands.

use clap::{Parser, Subcommand, ValueEnum};
use laika_host::config::{Config, RuntimeConfig};
use laika_host::mcp::McpServer;
use laika_host::serve::asks::Asks;
use laika_host::serve::guard::Token;
use laika_host::serve::Server;
use laika_host::session::Session;
use laika_host::store::Store;
use laika_host::transport::{self, Incoming, Outbox, TransportLimits};
use laika_host::{doctor, install, origin, replay, sink};
use laika_protocol::error::{Error, ErrorCode};
use laika_protocol::event::Event;
use laika_protocol::ids::ConversationId;
use laika_protocol::wire;
use laika_runtime::scripted::ScriptedConfig;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "laika-host",
    version,
    about = "Native-messaging host for the Laika AI sidebar",
    long_about = "Native-messaging host for the Laika AI sidebar.\n\n\
        Run without a subcommand (as browsers do), it speaks native-messaging frames on stdin/stdout.\n\
        Configuration: $LAIKA_CONFIG or <config dir>/laika/config.toml, overridden by LAIKA_DATA_DIR, \
        LAIKA_RUNTIME, LAIKA_BASE_URL, LAIKA_MODEL, LAIKA_API_KEY, LAIKA_LOG_FULL_LLM."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Feed recorded extension messages (NDJSON) through a full host and print the events as NDJSON.
    Replay {
        /// One extension message per line.
        file: PathBuf,
        /// Compare the (normalized) events with this NDJSON golden; exit 1 on a difference.
        #[arg(long)]
        expect: Option<PathBuf>,
        /// Keep the history database here (default: a fresh temporary one).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// Replay model outputs from this script (runtime "scripted") instead of the configured runtime.
        #[arg(long)]
        script: Option<PathBuf>,
    },
    /// Read and manage the chat history.
    History {
        #[command(subcommand)]
        command: HistoryCommand,
    },
    /// Write the native-messaging manifests that let browsers launch this binary.
    Install(InstallArgs),
    /// Remove the manifests `install` writes (every browser unless --browser is given).
    Uninstall(InstallArgs),
    /// Answer other programs over HTTP (NLWeb v0.54: /ask, /await) from what Laika has read.
    /// Every request needs `Authorization: Bearer <token>`: $LAIKA_SERVE_TOKEN, else the token
    /// kept in the data dir (made on first start; its path is printed, never the token).
    Serve {
        /// IP:PORT to listen on (default: serve.listen in the config, 127.0.0.1:8744).
        #[arg(long, value_name = "IP:PORT")]
        listen: Option<String>,
    },
    /// Serve the same asks as `serve` to an MCP client over stdio: tools `ask` and `await`.
    Mcp,
    /// Check every browser's manifest, launch the host like a browser does, and check the runtime.
    Doctor {
        /// Only these browsers (a missing manifest then fails).
        #[arg(long = "browser", value_name = "NAME", value_enum, num_args = 1.., value_delimiter = ',')]
        browsers: Vec<BrowserArg>,
        /// Also (or, without --browser, only) this custom Chromium profile.
        #[arg(long, value_name = "DIR")]
        user_data_dir: Vec<PathBuf>,
        /// Seconds to wait for the host's pong and for the runtime's TCP connect.
        #[arg(long, default_value_t = 5)]
        timeout: u64,
        /// Machine-readable report on stdout.
        #[arg(long)]
        json: bool,
    },
    /// The PDF reader the host runs in a child process: a PDF on stdin, its
    /// pages' text as JSON on stdout.
    #[command(hide = true)]
    PdfText {
        #[arg(long)]
        max_bytes: usize,
        #[arg(long)]
        max_pages: usize,
        #[arg(long)]
        cpu_seconds: u64,
    },
}

#[derive(clap::Args)]
struct InstallArgs {
    /// Browsers to (un)install for; `all` for every one. Default for install:
    /// the browsers found on this machine; for uninstall: all.
    #[arg(long = "browser", value_name = "NAME", value_enum, num_args = 1.., value_delimiter = ',')]
    browsers: Vec<BrowserArg>,
    /// System-wide folders (needs root) instead of your user's.
    #[arg(long)]
    system: bool,
    /// Say what would be written or removed, change nothing.
    #[arg(long)]
    dry_run: bool,
    /// A custom Chromium profile (`chromium --user-data-dir DIR`): writes DIR/NativeMessagingHosts/.
    #[arg(long, value_name = "DIR")]
    user_data_dir: Vec<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BrowserArg {
    Chrome,
    Chromium,
    Edge,
    Brave,
    Vivaldi,
    Firefox,
    All,
}

impl BrowserArg {
    fn browser(self) -> Option<install::Browser> {
        use install::Browser as B;
        match self {
            BrowserArg::Chrome => Some(B::Chrome),
            BrowserArg::Chromium => Some(B::Chromium),
            BrowserArg::Edge => Some(B::Edge),
            BrowserArg::Brave => Some(B::Brave),
            BrowserArg::Vivaldi => Some(B::Vivaldi),
            BrowserArg::Firefox => Some(B::Firefox),
            BrowserArg::All => None,
        }
    }
}

/// `all` anywhere means every browser; otherwise the named ones.
fn browser_choice(args: &[BrowserArg]) -> Option<install::Choice> {
    if args.is_empty() {
        None
    } else if args.contains(&BrowserArg::All) {
        Some(install::Choice::All)
    } else {
        Some(install::Choice::These(
            args.iter().filter_map(|a| a.browser()).collect(),
        ))
    }
}

#[derive(Subcommand)]
enum HistoryCommand {
    /// List conversations, newest first.
    List {
        #[arg(long, default_value_t = 20)]
        limit: usize,
        #[arg(long, default_value_t = 0)]
        offset: usize,
    },
    /// Show one conversation with its turns.
    Show { conversation_id: ConversationId },
    /// Full-text search over your messages and the answers.
    Search {
        query: String,
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Export one conversation.
    Export {
        conversation_id: ConversationId,
        #[arg(long, value_enum, default_value_t = Format::Json)]
        format: Format,
        /// Write to this file instead of stdout.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Delete one conversation and everything stored with it.
    Delete { conversation_id: ConversationId },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Json,
    Html,
}

/// Words that mean "a person is running a subcommand"; anything else is a
/// browser launch, whose arguments must never be rejected.
const CLI_WORDS: &[&str] = &[
    "replay",
    "history",
    "install",
    "uninstall",
    "doctor",
    "serve",
    "mcp",
    "pdf-text",
    "help",
    "--help",
    "-h",
    "--version",
    "-V",
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let is_cli = args.get(1).is_some_and(|a| CLI_WORDS.contains(&a.as_str()));
    if !is_cli {
        return stdio_mode(args.get(1..).unwrap_or_default());
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Replay {
            file,
            expect,
            data_dir,
            script,
        } => run_replay(file, expect, data_dir, script),
        Command::History { command } => run_history(command),
        Command::Install(args) => run_install(args, false),
        Command::Uninstall(args) => run_install(args, true),
        Command::Doctor {
            browsers,
            user_data_dir,
            timeout,
            json,
        } => run_doctor(browsers, user_data_dir, timeout, json),
        Command::Serve { listen } => run_serve(listen),
        Command::Mcp => run_mcp(),
        Command::PdfText {
            max_bytes,
            max_pages,
            cpu_seconds,
        } => return laika_host::pdf::isolate::child_main(max_bytes, max_pages, cpu_seconds),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("laika-host: error: {e}");
            match e.code {
                ErrorCode::ConfigInvalid | ErrorCode::InvalidRequest => ExitCode::from(2),
                _ => ExitCode::from(1),
            }
        }
    }
}

/// Logs to stderr and `laika-host.log`, scrubbed. Scrubbing (and compiling
/// the secret detectors, on the first line) runs on the log's own thread,
/// never on start-up's or a turn's path; the returned guard flushes it and
/// must live as long as the process logs.
fn init_logging(config: &Config) -> tracing_appender::non_blocking::WorkerGuard {
    use laika_host::logging::{Scrubbed, Sinks};
    let dir = config.data_dir();
    // The directory 0700 and the log 0600 from the start (see `data_dir`).
    let file = laika_host::data_dir::private_dir(&dir)
        .and_then(|_| laika_host::data_dir::append_private(&dir.join("laika-host.log")))
        .ok();
    // Not lossy: a burst of lines waits for the writer rather than vanish.
    // A short queue: the default's 128,000 slots cost more to allocate at
    // start-up than the whole hello.
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .buffered_lines_limit(1024)
        .thread_name("laika-log")
        .finish(Scrubbed(Sinks { file }));
    // stdout carries frames only: logs go to stderr and the log file.
    let result = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_target(false)
        .with_writer(writer)
        .try_init();
    drop(result);
    guard
}

/// Answers every message with one error: for a host that cannot serve
/// (bad config, refused origin, unreadable store) but must say why.
fn refuse(error: Error) -> impl FnMut(Incoming, &Outbox) {
    move |incoming, out| {
        let reply_to = match &incoming {
            Incoming::Message(m) => wire::message_id(m),
            _ => None,
        };
        if !matches!(incoming, Incoming::Closed) {
            out.send(sink::to_json(reply_to.as_ref(), &Event::error(&error)));
        }
    }
}

fn stdio_mode(launch_args: &[String]) -> ExitCode {
    let loaded = Config::from_process_env();
    let limits = |c: &Config| TransportLimits {
        max_inbound_frame: c.limits.max_inbound_frame,
        max_json_depth: c.limits.max_json_depth,
        ..TransportLimits::default()
    };
    let serve =
        |limits, handler| transport::serve(std::io::stdin(), std::io::stdout(), limits, handler);
    let mut _log = None;
    let result = match loaded {
        Err(e) => {
            eprintln!("laika-host: {e}");
            serve(
                TransportLimits::default(),
                Box::new(refuse(e)) as Box<dyn FnMut(Incoming, &Outbox) + Send>,
            )
        }
        Ok((config, path)) => {
            _log = Some(init_logging(&config));
            let caller = origin::caller_from_args(launch_args);
            tracing::info!(
                ?caller,
                version = env!("CARGO_PKG_VERSION"),
                "laika-host started"
            );
            let ready = origin::check_allowed(&caller, &config.allowed_origins).and_then(|_| {
                let store = Store::open(&config.database_path())?;
                let runtime = laika_runtime::from_config(&config.runtime)?;
                Ok((store, runtime))
            });
            let l = limits(&config);
            match ready {
                Err(e) => {
                    tracing::error!(code = %e.code, "refusing to serve: {}", e.chain());
                    serve(l, Box::new(refuse(e)))
                }
                Ok((store, runtime)) => {
                    let mut session = Session::new(config, path, store, runtime, true)
                        .with_pdf_reader(laika_host::pdf::Reader::isolated());
                    serve(
                        l,
                        Box::new(move |incoming, out: &Outbox| {
                            session.handle_incoming(incoming, out)
                        }),
                    )
                }
            }
        }
    };
    laika_host::stage_times::write();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("transport failed: {e}");
            ExitCode::from(1)
        }
    }
}

fn io_error(what: &str, path: &std::path::Path, e: std::io::Error) -> Error {
    Error::new(
        ErrorCode::InvalidRequest,
        format!("cannot {what} {}: {e}", path.display()),
    )
}

fn run_replay(
    file: PathBuf,
    expect: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    script: Option<PathBuf>,
) -> Result<ExitCode, Error> {
    let input = std::fs::read_to_string(&file).map_err(|e| io_error("read", &file, e))?;
    let (mut config, config_path) = Config::from_process_env()?;
    if let Some(s) = script {
        config.runtime = RuntimeConfig::Scripted(ScriptedConfig { script: Some(s) });
    }
    let tmp;
    let dir = match data_dir {
        Some(d) => d,
        None => {
            tmp = tempfile::tempdir()
                .map_err(|e| Error::store(format!("temporary data dir: {e}")))?;
            tmp.path().to_path_buf()
        }
    };
    config.data_dir = Some(dir);
    config.validate()?;
    let store = Store::open(&config.database_path())?;
    let runtime = laika_runtime::from_config(&config.runtime)?;
    let depth = config.limits.max_json_depth;
    let mut session = Session::new(config, config_path, store, runtime, false)
        .with_pdf_reader(laika_host::pdf::Reader::isolated());
    let events = replay::run(&input, &mut session, depth);
    let mut stdout = std::io::stdout().lock();
    for e in &events {
        let _ = writeln!(stdout, "{e}");
    }
    let _ = stdout.flush();
    if let Some(path) = expect {
        // `LAIKA_BLESS=1` rewrites the golden, as the schema tests do. It
        // keeps real ids and times (comparison normalizes both sides), so the
        // extension's tests can validate it against the wire schema.
        if std::env::var_os("LAIKA_BLESS").is_some_and(|v| v == "1") {
            let text: String = events.iter().map(|e| format!("{e}\n")).collect();
            std::fs::write(&path, text).map_err(|e| io_error("write", &path, e))?;
            eprintln!("laika-host: rewrote {}", path.display());
            return Ok(ExitCode::SUCCESS);
        }
        let golden = std::fs::read_to_string(&path).map_err(|e| io_error("read", &path, e))?;
        if let Err(diff) = replay::compare(&events, &golden) {
            eprintln!("laika-host: replay differs from {}: {diff}", path.display());
            return Ok(ExitCode::from(1));
        }
        eprintln!(
            "laika-host: replay matches {} ({} events)",
            path.display(),
            events.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The multi-thread async runtime `serve` and `mcp` run on.
fn async_runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::internal(format!("cannot start the async runtime: {e}")))
}

fn run_mcp() -> Result<ExitCode, Error> {
    use rmcp::ServiceExt;
    let (config, _) = Config::from_process_env()?;
    let _log = init_logging(&config);
    let store = Store::open(&config.database_path())?;
    let runtime = laika_runtime::from_config(&config.runtime)?;
    async_runtime()?.block_on(async {
        let server = McpServer::new(Asks::new(config, store, runtime));
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| Error::internal(format!("MCP: {e}")))?;
        running
            .waiting()
            .await
            .map_err(|e| Error::internal(format!("MCP: {e}")))?;
        Ok::<(), Error>(())
    })?;
    Ok(ExitCode::SUCCESS)
}

fn run_serve(listen: Option<String>) -> Result<ExitCode, Error> {
    let (mut config, _) = Config::from_process_env()?;
    if let Some(listen) = listen {
        config.serve.listen = listen;
    }
    config.validate()?;
    let _log = init_logging(&config);
    let token = Token::load(std::env::var("LAIKA_SERVE_TOKEN").ok(), &config.data_dir())?;
    let store = Store::open(&config.database_path())?;
    let runtime = laika_runtime::from_config(&config.runtime)?;
    async_runtime()?.block_on(async {
        let where_token = match &token.path {
            Some(path) => format!("the bearer token is in {}", path.display()),
            None => "the bearer token is $LAIKA_SERVE_TOKEN".to_owned(),
        };
        let server = Server::bind(config, store, runtime, token).await?;
        say(&format!(
            "laika-host serve: listening on http://{} ({where_token})\n",
            server.addr
        ));
        server.run().await
    })?;
    Ok(ExitCode::SUCCESS)
}

fn run_history(command: HistoryCommand) -> Result<ExitCode, Error> {
    let (config, _) = Config::from_process_env()?;
    let mut store = Store::open(&config.database_path())?;
    let print = |v: serde_json::Value| {
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    };
    match command {
        HistoryCommand::List { limit, offset } => {
            let list = store.list_conversations(limit, offset)?;
            print(serde_json::to_value(list).unwrap_or_default());
        }
        HistoryCommand::Show { conversation_id } => {
            print(serde_json::to_value(store.conversation(&conversation_id)?).unwrap_or_default());
        }
        HistoryCommand::Search { query, limit } => {
            print(serde_json::to_value(store.search(&query, limit)?).unwrap_or_default());
        }
        HistoryCommand::Export {
            conversation_id,
            format,
            output,
        } => {
            let text = match format {
                // Through a `Value`, so keys come out sorted as in every other output.
                Format::Json => serde_json::to_value(store.export(&conversation_id)?)
                    .and_then(|v| serde_json::to_string_pretty(&v))
                    .unwrap_or_default(),
                Format::Html => laika_core::render::export::to_html(
                    &store.conversation(&conversation_id)?,
                    &store.list_prompts()?,
                ),
            };
            match output {
                Some(path) => {
                    std::fs::write(&path, text).map_err(|e| io_error("write", &path, e))?
                }
                None => println!("{text}"),
            }
        }
        HistoryCommand::Delete { conversation_id } => {
            store.delete_conversation(&conversation_id)?;
            eprintln!("deleted conversation {conversation_id}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints to stdout; a closed stdout (`| head`) is not worth a panic.
fn say(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
}

fn install_error(e: install::InstallError) -> Error {
    Error::new(ErrorCode::Internal, e.to_string())
}

fn run_install(args: InstallArgs, uninstalling: bool) -> Result<ExitCode, Error> {
    let env = install::Env::from_process().map_err(install_error)?;
    let scope = if args.system {
        install::Scope::System
    } else {
        install::Scope::User
    };
    let choice = match browser_choice(&args.browsers) {
        Some(choice) => choice,
        // A custom profile alone means just that profile.
        None if !args.user_data_dir.is_empty() => install::Choice::These(Vec::new()),
        None if uninstalling => install::Choice::All,
        None => install::Choice::Detected,
    };
    let targets = install::targets(&env, &choice, scope, &args.user_data_dir);
    let mut print = |a: &install::Action| say(&format!("{a}\n"));
    if uninstalling {
        install::uninstall(&targets, args.dry_run, &mut print).map_err(install_error)?;
        return Ok(ExitCode::SUCCESS);
    }
    if targets.is_empty() {
        say("No supported browser found (Chrome, Chromium, Edge, Brave, Vivaldi, Firefox): nothing written.\n\
             Install a browser and run `laika-host install` again, or name one: \
             `laika-host install --browser chromium` (or `--browser all`).\n");
        return Ok(ExitCode::SUCCESS);
    }
    let (config, config_path) = Config::from_process_env()?;
    for entry in install::unusable_configured(&config.allowed_origins) {
        eprintln!(
            "laika-host: warning: allowed_origins entry {entry:?} in {} is neither chrome-extension://<id>/ nor a Firefox add-on id; it is left out of the manifests",
            config_path.display()
        );
    }
    let host = std::env::current_exe()
        .map_err(|e| Error::internal(format!("cannot find this program's own path: {e}")))?;
    say(&format!("Host binary: {}\n", host.display()));
    install::install(
        &targets,
        &host,
        &config.allowed_origins,
        args.dry_run,
        &mut print,
    )
    .map_err(install_error)?;
    if !args.dry_run {
        say("Check it with `laika-host doctor`.\n");
    }
    Ok(ExitCode::SUCCESS)
}

/// The loopback ports doctor asks for model servers: the config's
/// `discover.ports` (`LAIKA_DISCOVER_PORTS` replaces them; empty turns
/// discovery off), else, with a config that does not load, the servers'
/// defaults.
fn discover_ports(config: &Result<(Config, PathBuf), Error>) -> Vec<u16> {
    match config {
        Ok((c, _)) => c.discover.ports.clone(),
        Err(_) => laika_runtime::discover::DEFAULT_PORTS.to_vec(),
    }
}

fn run_doctor(
    browsers: Vec<BrowserArg>,
    user_data_dirs: Vec<PathBuf>,
    timeout: u64,
    json: bool,
) -> Result<ExitCode, Error> {
    let env = install::Env::from_process().map_err(install_error)?;
    let config = Config::from_process_env();
    let options = doctor::Options {
        browsers: browser_choice(&browsers)
            .map(|c| c.browsers(&env))
            .unwrap_or_default(),
        user_data_dirs,
        timeout: std::time::Duration::from_secs(timeout.max(1)),
        discover_ports: discover_ports(&config),
    };
    let report = doctor::run(&env, &options, &config);
    if json {
        say(&(serde_json::to_string_pretty(&report.to_json()).unwrap_or_default() + "\n"));
    } else {
        say(&report.to_text());
    }
    Ok(if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
