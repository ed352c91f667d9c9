//! `laika-host doctor`: checks, one line each, that every browser can launch
//! the host and that the configured runtime is reachable, and says what to do
//! about each failure.
//!
//! For each manifest it applies the rules the browsers enforce (valid JSON,
//! name syntax and file name, `type: "stdio"`, absolute `path` to an
//! executable, well-formed allowed callers including Laika's), then launches
//! the manifest's program the way a browser does (same arguments, working
//! directory = the program's folder), sends a framed `ping` and waits for
//! `pong`. Bytes on stdout that are not frames are reported as text: they are
//! what breaks a browser's connection.
//!
//! Invariants: doctor never writes a manifest or the config; a launched
//! program is always reaped (killed after the timeout); runtime checks open
//! at most one TCP connection per endpoint and send nothing on it.

use crate::config::{Config, RuntimeConfig};
use crate::frame::{encode_frame, MAX_OUTBOUND_FRAME};
use crate::install::{self, Browser, Env, Family, Scope, HOST_NAME};
use laika_protocol::error::{Error, ErrorCode};
use laika_runtime::discover;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Default wait for `pong` (the host opens its store before answering).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
/// Most stdout bytes kept from a launched program.
const MAX_CAPTURE: usize = 2 * MAX_OUTBOUND_FRAME;
/// Most stderr bytes kept (shown when the host fails).
const MAX_STDERR: usize = 64 << 10;
/// Below this much captured stdout, every read is scanned for the answer.
const SCAN_ALWAYS_BELOW: usize = 16 << 10;
const SCAN_INTERVAL: Duration = Duration::from_millis(50);
/// How long a program may take to exit once its stdin is closed.
const EXIT_GRACE: Duration = Duration::from_secs(2);
const PING_ID: &str = "doctor-ping";
/// Longest excerpt of stray output or stderr quoted in a report line.
const MAX_QUOTE_CHARS: usize = 300;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Pass,
    Fail,
    /// Not applicable (a browser that is not installed and has no manifest).
    Skip,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Skip => "skip",
        }
    }
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// What is checked: "Chromium (user) <manifest path>", "runtime".
    pub section: String,
    pub status: Status,
    pub message: String,
    /// What to do, for failures.
    pub fix: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub checks: Vec<Check>,
}

impl Report {
    /// True when nothing failed.
    pub fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.status != Status::Fail)
    }

    /// Lines for people: a header per section, `✓`/`✗`/`-` per check and
    /// `→` with the fix under each failure.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let mut section: Option<&str> = None;
        for c in &self.checks {
            if section != Some(c.section.as_str()) {
                out.push_str(&c.section);
                out.push('\n');
                section = Some(&c.section);
            }
            let mark = match c.status {
                Status::Pass => '✓',
                Status::Fail => '✗',
                Status::Skip => '-',
            };
            out.push_str(&format!("  {mark} {}\n", c.message));
            if let Some(fix) = &c.fix {
                out.push_str(&format!("    → {fix}\n"));
            }
        }
        let failed = self
            .checks
            .iter()
            .filter(|c| c.status == Status::Fail)
            .count();
        out.push_str(&match failed {
            0 => "\nAll checks passed.\n".to_string(),
            1 => "\n1 check failed.\n".to_string(),
            n => format!("\n{n} checks failed.\n"),
        });
        out
    }

    pub fn to_json(&self) -> Value {
        json!({
            "ok": self.ok(),
            "checks": self.checks.iter().map(|c| json!({
                "section": c.section,
                "status": c.status.as_str(),
                "message": c.message,
                "fix": c.fix,
            })).collect::<Vec<_>>(),
        })
    }
}

/// What to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Browsers asked for by name: a missing manifest is a failure for them.
    /// Empty with no `user_data_dirs`: every known browser, failing only for
    /// those that look installed.
    pub browsers: Vec<Browser>,
    /// Custom Chromium profiles (`DIR/NativeMessagingHosts/`).
    pub user_data_dirs: Vec<PathBuf>,
    pub timeout: Duration,
    /// Loopback ports asked what model server listens there
    /// (`laika_runtime::discover`); empty skips discovery.
    pub discover_ports: Vec<u16>,
}

/// Runs every check. `config` is the loaded configuration (or why it could
/// not be loaded), with the path of its file.
pub fn run(env: &Env, options: &Options, config: &Result<(Config, PathBuf), Error>) -> Report {
    let mut checks = Vec::new();
    let named = !options.browsers.is_empty();
    let browsers: Vec<Browser> = match (named, options.user_data_dirs.is_empty()) {
        (true, _) => options.browsers.clone(),
        (false, true) => Browser::ALL.to_vec(),
        (false, false) => Vec::new(),
    };
    let mut manifests_found = 0;
    for browser in browsers {
        let dirs: Vec<PathBuf> = [Scope::User, Scope::System]
            .into_iter()
            .flat_map(|s| env.manifest_dirs(browser, s))
            .collect();
        // Browsers read the first manifest they find, per-user first.
        let found = dirs
            .iter()
            .map(|d| d.join(install::manifest_file_name()))
            .find(|p| p.exists());
        match found {
            Some(path) => {
                manifests_found += 1;
                let section = format!("{} {}", browser.label(), path.display());
                checks.extend(check_manifest(
                    &section,
                    &path,
                    browser.family(),
                    options.timeout,
                ));
            }
            None if named || env.is_present(browser) => checks.push(fail(
                browser.label(),
                format!("no {HOST_NAME} manifest (looked in {})", join_paths(&dirs)),
                format!("run `laika-host install --browser {}`", browser.name()),
            )),
            None => checks.push(Check {
                section: browser.label().to_string(),
                status: Status::Skip,
                message: "not installed and no manifest: skipped".into(),
                fix: None,
            }),
        }
    }
    for dir in &options.user_data_dirs {
        let target = install::custom_target(dir);
        let path = target.manifest_path();
        let section = format!("{} {}", target.label, path.display());
        if path.exists() {
            manifests_found += 1;
            checks.extend(check_manifest(
                &section,
                &path,
                Family::Chromium,
                options.timeout,
            ));
        } else {
            checks.push(fail(
                &section,
                "no manifest here".into(),
                format!("run `laika-host install --user-data-dir {}`", dir.display()),
            ));
        }
    }
    if manifests_found == 0 && checks.iter().all(|c| c.status == Status::Skip) {
        checks.push(fail(
            "browsers",
            format!("no browser has a {HOST_NAME} manifest, and none of the supported browsers was found"),
            "install Chrome, Chromium, Edge, Brave, Vivaldi or Firefox, or write the manifests anyway: `laika-host install --browser all`".into(),
        ));
    }
    checks.push(check_runtime(config, options.timeout));
    if !options.discover_ports.is_empty() {
        checks.extend(discovered(
            &discover::scan(&options.discover_ports),
            &options.discover_ports,
        ));
    }
    Report { checks }
}

/// One line per model server found on loopback, with the `[runtime]` keys
/// that use it; never a failure (none found is a fact, not a fault).
pub fn discovered(found: &[discover::ModelServer], ports: &[u16]) -> Vec<Check> {
    const SECTION: &str = "model servers on 127.0.0.1";
    if found.is_empty() {
        let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
        return vec![Check {
            section: SECTION.into(),
            status: Status::Skip,
            message: format!("none answered on ports {}", ports.join(", ")),
            fix: None,
        }];
    }
    found
        .iter()
        .map(|f| {
            let profile = match (f.profile, f.guessed) {
                (Some(p), false) => format!(", profile = \"{p}\""),
                (Some(p), true) => format!(", profile = \"{p}\" (a guess: check it)"),
                (None, _) if f.runtime == "openai" => {
                    ", profile: unknown, pick one (see docs/runtimes.md)".into()
                }
                (None, _) => String::new(),
            };
            let context = f
                .context_window
                .map(|n| format!(", context {n} tokens"))
                .unwrap_or_default();
            let models = match f.models.len() {
                0 => "no models listed".to_string(),
                n if n <= 3 => format!("models: {}", f.models.join(", ")),
                n => format!("models: {}, … ({n} in all)", f.models[..3].join(", ")),
            };
            pass(
                SECTION,
                format!(
                    "{:?} at {}: kind = \"{}\"{profile}{context}; {models}",
                    f.kind, f.base_url, f.runtime
                ),
            )
        })
        .collect()
}

fn join_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn pass(section: &str, message: String) -> Check {
    Check {
        section: section.to_string(),
        status: Status::Pass,
        message,
        fix: None,
    }
}

fn fail(section: &str, message: String, fix: String) -> Check {
    Check {
        section: section.to_string(),
        status: Status::Fail,
        message,
        fix: Some(fix),
    }
}

const REINSTALL: &str = "run `laika-host install` to rewrite the manifest";

/// The browser's rules for one manifest, then a real launch when the
/// manifest names a program that can run.
pub fn check_manifest(section: &str, path: &Path, family: Family, timeout: Duration) -> Vec<Check> {
    let mut checks = Vec::new();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            return vec![fail(
                section,
                format!("cannot read the manifest: {e}"),
                "make it readable by your user (chmod 644), or run `laika-host install`".into(),
            )]
        }
    };
    let manifest = match serde_json::from_str::<Value>(&text) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => {
            return vec![fail(
                section,
                "the manifest is JSON but not an object".into(),
                REINSTALL.into(),
            )]
        }
        Err(e) => {
            return vec![fail(
                section,
                format!("the manifest is not valid JSON: {e}"),
                REINSTALL.into(),
            )]
        }
    };
    checks.push(pass(section, "manifest is valid JSON".into()));

    let stem = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".json"))
        .unwrap_or_default();
    checks.push(match manifest.get("name").and_then(Value::as_str) {
        Some(name) if install::is_valid_host_name(name) && name == stem => {
            pass(section, format!("name {name:?} is valid and matches the file name"))
        }
        Some(name) if !install::is_valid_host_name(name) => fail(
            section,
            format!("name {name:?} is invalid: browsers require lowercase letters, digits, _ and dots (^[a-z0-9_]+(\\.[a-z0-9_]+)*$)"),
            format!("set \"name\" to {HOST_NAME:?}, or {REINSTALL}"),
        ),
        Some(name) => fail(
            section,
            format!("name {name:?} does not match the file name {stem:?}: browsers ignore such a manifest"),
            format!("set \"name\" to {stem:?}, or {REINSTALL}"),
        ),
        None => fail(section, "\"name\" is missing or not a string".into(), REINSTALL.into()),
    });

    checks.push(match manifest.get("type").and_then(Value::as_str) {
        Some("stdio") => pass(section, "type is \"stdio\"".into()),
        other => fail(
            section,
            format!("type is {other:?}, browsers only launch \"stdio\" hosts"),
            format!("set \"type\" to \"stdio\", or {REINSTALL}"),
        ),
    });

    checks.push(check_callers(section, &manifest, family));

    let program = match manifest.get("path").and_then(Value::as_str) {
        None => {
            checks.push(fail(
                section,
                "\"path\" is missing or not a string".into(),
                REINSTALL.into(),
            ));
            return checks;
        }
        Some(p) if !Path::new(p).is_absolute() => {
            checks.push(fail(
                section,
                format!("path {p:?} is relative: browsers on Linux and macOS only launch an absolute path"),
                format!("set \"path\" to the absolute path of laika-host (e.g. {:?}), or {REINSTALL}", std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_else(|_| "/home/you/.local/bin/laika-host".into())),
            ));
            return checks;
        }
        Some(p) => PathBuf::from(p),
    };
    checks.push(pass(
        section,
        format!("path is absolute: {}", program.display()),
    ));
    match executable_problem(&program) {
        Some(problem) => {
            checks.push(fail(
                section,
                format!("{}: {problem}", program.display()),
                "reinstall the binary (`bash scripts/install.sh`), or point \"path\" at it with `laika-host install`".into(),
            ));
            return checks;
        }
        None => checks.push(pass(section, "the program exists and is executable".into())),
    }
    let args = match family {
        Family::Chromium => vec![install::LAIKA_CHROMIUM_ORIGIN.to_string()],
        Family::Firefox => vec![
            path.display().to_string(),
            install::LAIKA_FIREFOX_ID.to_string(),
        ],
    };
    checks.extend(launch_checks(section, &program, &args, timeout));
    checks
}

fn check_callers(section: &str, manifest: &Value, family: Family) -> Check {
    let (key, other, own, valid): (_, _, _, fn(&str) -> bool) = match family {
        Family::Chromium => (
            "allowed_origins",
            "allowed_extensions",
            install::LAIKA_CHROMIUM_ORIGIN,
            install::is_chromium_origin,
        ),
        Family::Firefox => (
            "allowed_extensions",
            "allowed_origins",
            install::LAIKA_FIREFOX_ID,
            install::is_firefox_extension_id,
        ),
    };
    let Some(list) = manifest.get(key).and_then(Value::as_array) else {
        let hint = if manifest.get(other).is_some() {
            format!(" (it has {other:?}: a manifest for the other browser family?)")
        } else {
            String::new()
        };
        return fail(
            section,
            format!("{key:?} is missing or not a list{hint}"),
            REINSTALL.into(),
        );
    };
    let entries: Vec<Option<&str>> = list.iter().map(Value::as_str).collect();
    let bad: Vec<String> = list
        .iter()
        .filter(|v| !v.as_str().is_some_and(valid))
        .map(Value::to_string)
        .collect();
    if !bad.is_empty() {
        let rule = match family {
            Family::Chromium => {
                "each must be chrome-extension://<32 letters a-p>/ (with the slash, no wildcard)"
            }
            Family::Firefox => "each must be an add-on id like name@domain or {uuid}",
        };
        return fail(
            section,
            format!(
                "{key} has malformed entries {}: {rule}; the browser rejects the whole manifest",
                bad.join(", ")
            ),
            format!("fix or remove them, or {REINSTALL}"),
        );
    }
    if !entries.contains(&Some(own)) {
        return fail(
            section,
            format!(
                "{key} does not include Laika ({own}), so the browser will not let Laika connect"
            ),
            format!("add {own:?} to {key:?}, or {REINSTALL}"),
        );
    }
    pass(section, format!("{key} includes Laika ({own})"))
}

/// Why `path` cannot be run, or `None` when it is an executable file.
fn executable_problem(path: &Path) -> Option<String> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Some("no such file (the binary was moved or deleted)".into())
        }
        Err(e) => return Some(format!("cannot inspect it: {e}")),
    };
    if !meta.is_file() {
        return Some("not a regular file".into());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o111 == 0 {
            return Some("not executable (chmod +x it)".into());
        }
    }
    None
}

/// What a launched program did.
#[derive(Debug, Default)]
pub struct Launched {
    /// The frames read from stdout, in order.
    pub frames: Vec<Value>,
    /// Runs of stdout bytes that are not frames.
    pub stray: Vec<Vec<u8>>,
    pub stderr: Vec<u8>,
    pub elapsed: Duration,
    /// `None` while running when we gave up waiting.
    pub exit: Option<std::process::ExitStatus>,
    pub timed_out: bool,
    /// Stdout reached the capture limit before any answer.
    pub flooded: bool,
}

/// Splits captured stdout into frames (native-endian `u32` length, at most
/// [`MAX_OUTBOUND_FRAME`], a JSON object body) and the stray bytes around them.
/// A frame is searched for at every offset, so text printed before or between
/// frames is isolated exactly.
pub fn scan_stdout(bytes: &[u8]) -> (Vec<Value>, Vec<Vec<u8>>) {
    let mut frames = Vec::new();
    let mut stray = Vec::new();
    let mut stray_start: Option<usize> = None;
    let mut i = 0;
    while i < bytes.len() {
        if let Some((value, len)) = frame_at(bytes, i) {
            if let Some(s) = stray_start.take() {
                stray.push(bytes.get(s..i).unwrap_or_default().to_vec());
            }
            frames.push(value);
            i += len;
        } else {
            stray_start.get_or_insert(i);
            i += 1;
        }
    }
    if let Some(s) = stray_start {
        stray.push(bytes.get(s..).unwrap_or_default().to_vec());
    }
    (frames, stray)
}

/// The frame starting at `at` and its total length, if one does.
fn frame_at(bytes: &[u8], at: usize) -> Option<(Value, usize)> {
    let header: [u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
    let len = usize::try_from(u32::from_ne_bytes(header)).ok()?;
    if len == 0 || len > MAX_OUTBOUND_FRAME {
        return None;
    }
    let body = bytes.get(at + 4..at.checked_add(4 + len)?)?;
    // Cheap filter before parsing: every message is an object.
    if body.first() != Some(&b'{') {
        return None;
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(v @ Value::Object(_)) => Some((v, 4 + len)),
        _ => None,
    }
}

fn answered(frames: &[Value]) -> bool {
    frames
        .iter()
        .any(|f| f.get("reply_to").and_then(Value::as_str) == Some(PING_ID))
}

/// Reads `reader` into chunks on a bounded channel: a program flooding its
/// pipe is slowed to our pace instead of filling memory. The thread ends at
/// EOF or when the receiver is gone; it is never joined, so a program that
/// keeps the pipe open cannot hang us.
fn pump(mut reader: impl Read + Send + 'static) -> Receiver<Vec<u8>> {
    let (tx, rx) = sync_channel(16);
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        loop {
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.send(buf.get(..n).unwrap_or_default().to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    rx
}

/// Reads `reader` to its end, keeping the first `cap` bytes, and sends them
/// once: stderr must keep flowing (a chatty host would otherwise block on
/// it) but only its start is shown.
fn collect(mut reader: impl Read + Send + 'static, cap: usize) -> Receiver<Vec<u8>> {
    let (tx, rx) = sync_channel(1);
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 8192];
        while let Ok(n @ 1..) = reader.read(&mut buf) {
            append(&mut kept, buf.get(..n).unwrap_or_default(), cap);
        }
        let _ = tx.send(kept);
    });
    rx
}

fn append(into: &mut Vec<u8>, chunk: &[u8], cap: usize) {
    let room = cap.saturating_sub(into.len());
    into.extend_from_slice(chunk.get(..room.min(chunk.len())).unwrap_or_default());
}

/// Takes what arrives until `until`, EOF, or the cap.
fn drain(rx: &Receiver<Vec<u8>>, into: &mut Vec<u8>, cap: usize, until: Instant) {
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(chunk) if into.len() < cap => append(into, &chunk, cap),
            _ => return,
        }
    }
}

/// Launches `program` like a browser, sends a framed `ping` and collects
/// what comes back until `pong` (or an error) arrives, `timeout` passes, or
/// stdout passes [`MAX_CAPTURE`] bytes.
pub fn launch(program: &Path, args: &[String], timeout: Duration) -> std::io::Result<Launched> {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = program.parent() {
        command.current_dir(dir);
    }
    let start = Instant::now();
    let mut child = command.spawn()?;
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        reap(&mut child);
        return Err(std::io::Error::other(
            "the program's pipes could not be opened",
        ));
    };
    let out_rx = pump(stdout);
    let err_rx = collect(stderr, MAX_STDERR);
    let ping = json!({"type": "ping", "id": PING_ID}).to_string();
    // A program that exits at once makes this fail; what it printed says why.
    let _ = stdin
        .write_all(&encode_frame(ping.as_bytes()))
        .and_then(|_| stdin.flush());
    let mut captured = Vec::new();
    let deadline = start + timeout;
    let mut launched = Launched::default();
    let mut last_scan: Option<Instant> = None;
    let is_error = |f: &Value| f.get("type").and_then(Value::as_str) == Some("error");
    loop {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            launched.timed_out = true;
            break;
        };
        match out_rx.recv_timeout(left) {
            Ok(chunk) => {
                append(&mut captured, &chunk, MAX_CAPTURE);
                // A program flooding stdout will not answer sensibly; stop here.
                if captured.len() >= MAX_CAPTURE {
                    launched.flooded = true;
                    break;
                }
                // Each scan is linear in the capture: once it is large, scan
                // at most every SCAN_INTERVAL so many small writes stay cheap.
                let due = captured.len() <= SCAN_ALWAYS_BELOW
                    || last_scan.is_none_or(|t| t.elapsed() >= SCAN_INTERVAL);
                if due {
                    last_scan = Some(Instant::now());
                    let (frames, _) = scan_stdout(&captured);
                    if answered(&frames) || frames.iter().any(is_error) {
                        break;
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                launched.timed_out = true;
                break;
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    launched.elapsed = start.elapsed();
    // Closing stdin is how a browser says goodbye; the host then exits.
    drop(stdin);
    let grace = Instant::now() + EXIT_GRACE;
    drain(&out_rx, &mut captured, MAX_CAPTURE, grace);
    launched.exit = wait_until(&mut child, grace);
    if launched.exit.is_none() {
        reap(&mut child);
    }
    launched.stderr = err_rx
        .recv_timeout(Duration::from_millis(500))
        .unwrap_or_default();
    let (frames, stray) = scan_stdout(&captured);
    launched.frames = frames;
    launched.stray = stray;
    Ok(launched)
}

fn wait_until(child: &mut Child, until: Instant) -> Option<std::process::ExitStatus> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
            _ => return None,
        }
    }
}

fn reap(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Bytes as quotable text: lossy UTF-8, control characters escaped, cut to a
/// readable length.
fn quote(bytes: &[u8]) -> String {
    let text: String = String::from_utf8_lossy(bytes).escape_debug().collect();
    laika_core::text::clip(&text, MAX_QUOTE_CHARS)
}

fn stderr_hint(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let last = text.lines().rev().find(|l| !l.trim().is_empty());
    match last {
        Some(line) => format!("; its last stderr line: {}", quote(line.trim().as_bytes())),
        None => String::new(),
    }
}

fn launch_checks(section: &str, program: &Path, args: &[String], timeout: Duration) -> Vec<Check> {
    let by_hand = format!(
        "run it by hand to see its errors: `{} {}`",
        program.display(),
        args.join(" ")
    );
    let launched = match launch(program, args, timeout) {
        Ok(l) => l,
        Err(e) => {
            return vec![fail(
                section,
                format!("cannot start {}: {e}", program.display()),
                "check that it is a program for this machine (a shell script needs a #! line)"
                    .into(),
            )]
        }
    };
    let mut checks = Vec::new();
    let pong = launched.frames.iter().find(|f| {
        f.get("type").and_then(Value::as_str) == Some("pong")
            && f.get("reply_to").and_then(Value::as_str) == Some(PING_ID)
    });
    let error = launched
        .frames
        .iter()
        .find(|f| f.get("type").and_then(Value::as_str) == Some("error"));
    checks.push(if pong.is_some() {
        pass(
            section,
            format!(
                "the host answered ping with pong in {} ms",
                launched.elapsed.as_millis()
            ),
        )
    } else if let Some(e) = error {
        let code = e.get("code").and_then(Value::as_str).unwrap_or("?");
        let message = e.get("message").and_then(Value::as_str).unwrap_or("");
        let fix = match code {
            "ORIGIN_DENIED" => format!(
                "add {:?} to `allowed_origins` in the config file (the default list has it)",
                args.last().map(String::as_str).unwrap_or_default()
            ),
            "CONFIG_INVALID" => "fix the config key named in the message".to_string(),
            _ => "see laika-host.log in the data dir (default ~/.local/share/laika)".to_string(),
        };
        fail(
            section,
            format!("the host answered ping with error {code}: {message}"),
            fix,
        )
    } else if launched.flooded {
        fail(
            section,
            format!(
                "the program wrote {} MiB to stdout without answering ping",
                MAX_CAPTURE >> 20
            ),
            by_hand.clone(),
        )
    } else if launched.timed_out {
        fail(
            section,
            format!(
                "no pong within {} s{}",
                timeout.as_secs_f32(),
                stderr_hint(&launched.stderr)
            ),
            by_hand.clone(),
        )
    } else {
        let status = launched
            .exit
            .map(|s| s.to_string())
            .unwrap_or_else(|| "closed its stdout".into());
        fail(
            section,
            format!(
                "the program ended without answering ping ({status}){}",
                stderr_hint(&launched.stderr)
            ),
            by_hand.clone(),
        )
    });
    checks.push(if launched.stray.is_empty() {
        pass(section, "stdout carries frames only".into())
    } else {
        let quoted: Vec<String> = launched.stray.iter().map(|s| format!("\"{}\"", quote(s))).collect();
        fail(
            section,
            format!(
                "stray output on stdout (not frames): {}; a browser reads it as a frame length and drops the connection",
                quoted.join(", ")
            ),
            "find what prints it (a wrapper script, a shell profile, a library) and send it to stderr: stdout is for frames only".into(),
        )
    });
    checks
}

/// The configured runtime: `builtin` needs nothing; a runtime with a base URL
/// must accept a TCP connection at its host and port.
pub fn check_runtime(config: &Result<(Config, PathBuf), Error>, timeout: Duration) -> Check {
    const SECTION: &str = "runtime";
    let (config, path) = match config {
        Ok(c) => c,
        Err(e) => {
            return fail(
                SECTION,
                format!("the configuration is invalid: {}", e.message),
                match e.code {
                    ErrorCode::ConfigInvalid => {
                        "fix the key or variable named above (see README: Configuration)".into()
                    }
                    _ => "see README: Configuration".into(),
                },
            )
        }
    };
    let kind = config.runtime.kind();
    let endpoints = match &config.runtime {
        RuntimeConfig::Builtin => {
            return pass(
                SECTION,
                "runtime \"builtin\": offline, nothing to reach".into(),
            )
        }
        RuntimeConfig::Scripted(c) => {
            let script = c.script.as_deref().unwrap_or(Path::new(""));
            return if script.is_file() {
                pass(
                    SECTION,
                    format!("runtime \"scripted\" replays {}", script.display()),
                )
            } else {
                fail(
                    SECTION,
                    format!(
                        "runtime \"scripted\": script {} does not exist",
                        script.display()
                    ),
                    format!(
                        "set runtime.script in {} (or LAIKA_SCRIPT) to an existing file",
                        path.display()
                    ),
                )
            };
        }
        RuntimeConfig::Command(c) => {
            let program = c.command.as_deref().unwrap_or(Path::new(""));
            return Check {
                section: SECTION.to_string(),
                status: Status::Skip,
                message: format!(
                    "runtime \"command\": the plugin {} starts with each call, not here",
                    program.display()
                ),
                fix: None,
            };
        }
        RuntimeConfig::OpenAi(_) | RuntimeConfig::Ollama(_) | RuntimeConfig::Anthropic(_) => {
            config.runtime.endpoints()
        }
    };
    let fix = format!(
        "start the runtime server (e.g. `bash scripts/llama-server.sh`), or fix runtime.base_url in {} (or LAIKA_BASE_URL)",
        path.display()
    );
    let endpoints = match endpoints {
        Ok(urls) => urls,
        Err(e) => return fail(SECTION, format!("runtime {kind:?}: {}", e.message), fix),
    };
    // The runtime tries its endpoints in order: one that answers is enough.
    let mut problems = Vec::new();
    for base in &endpoints {
        match tcp_reachable(base, timeout) {
            Ok(addr) => {
                return pass(
                    SECTION,
                    format!("runtime {kind:?}: {addr} accepts connections"),
                )
            }
            Err(problem) => problems.push(problem),
        }
    }
    fail(
        SECTION,
        format!("runtime {kind:?}: {}", problems.join("; ")),
        fix,
    )
}

/// Connects (and immediately disconnects) to the URL's host and port.
fn tcp_reachable(base_url: &str, timeout: Duration) -> Result<String, String> {
    let url = url::Url::parse(base_url)
        .map_err(|e| format!("base_url {base_url:?} is not a URL: {e}"))?;
    let host = url
        .host_str()
        .ok_or_else(|| format!("base_url {base_url:?} has no host"))?;
    let port = url
        .port_or_known_default()
        .ok_or_else(|| format!("base_url {base_url:?} has no port"))?;
    let addrs = url
        .socket_addrs(|| None)
        .map_err(|e| format!("cannot resolve {host}: {e}"))?;
    let mut last = format!("{host} resolves to no address");
    for addr in addrs {
        match std::net::TcpStream::connect_timeout(&addr, timeout) {
            Ok(_) => return Ok(format!("{host}:{port}")),
            Err(e) => last = format!("nothing accepts connections at {host}:{port} ({addr}): {e}"),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use laika_runtime::http::HttpConfig;
    use laika_runtime::openai::OpenAiConfig;

    fn frame(v: Value) -> Vec<u8> {
        encode_frame(v.to_string().as_bytes())
    }

    #[test]
    fn stray_bytes_are_isolated_around_frames() {
        let mut bytes = b"Welcome to bash!\n".to_vec();
        bytes.extend(frame(json!({"type": "pong", "reply_to": PING_ID})));
        bytes.extend(b"bye");
        let (frames, stray) = scan_stdout(&bytes);
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0]["type"], "pong");
        assert_eq!(stray, vec![b"Welcome to bash!\n".to_vec(), b"bye".to_vec()]);
        assert!(answered(&frames));

        let (frames, stray) = scan_stdout(&frame(json!({"type": "pong"})));
        assert_eq!((frames.len(), stray.len()), (1, 0));
        // A header promising more than browsers accept is never a frame.
        let mut huge = (u32::try_from(MAX_OUTBOUND_FRAME).unwrap() + 1)
            .to_ne_bytes()
            .to_vec();
        huge.extend(b"{}");
        assert_eq!(scan_stdout(&huge).0.len(), 0);
        assert_eq!(scan_stdout(&[]), (vec![], vec![]));
    }

    #[test]
    fn quotes_escape_control_characters_and_are_bounded() {
        assert_eq!(quote(b"junk\n\x1b[0m"), "junk\\n\\u{1b}[0m");
        let long = vec![b'a'; 5000];
        assert!(quote(&long).chars().count() <= MAX_QUOTE_CHARS + 1);
    }

    #[test]
    fn discovered_servers_are_listed_with_their_runtime_keys() {
        use laika_runtime::discover::{ModelServer, ServerKind};
        let none = discovered(&[], &[11434, 8080]);
        assert_eq!(none.len(), 1);
        assert_eq!(none[0].status, Status::Skip);
        assert!(none[0].message.contains("11434, 8080"));
        let llama = ModelServer {
            kind: ServerKind::LlamaCpp,
            base_url: "http://127.0.0.1:8080/v1".into(),
            runtime: "openai",
            profile: Some("llama.cpp"),
            guessed: false,
            models: vec!["a".into(), "b".into(), "c".into(), "d".into()],
            context_window: Some(8192),
            version: None,
        };
        let unknown = ModelServer {
            kind: ServerKind::OpenAiCompatible,
            profile: None,
            context_window: None,
            models: Vec::new(),
            ..llama.clone()
        };
        let lines = discovered(&[llama, unknown], &[8080]);
        assert!(lines.iter().all(|c| c.status == Status::Pass));
        assert_eq!(
            lines[0].message,
            "LlamaCpp at http://127.0.0.1:8080/v1: kind = \"openai\", profile = \"llama.cpp\", context 8192 tokens; models: a, b, c, … (4 in all)"
        );
        assert!(
            lines[1].message.contains("profile: unknown, pick one"),
            "{}",
            lines[1].message
        );
        assert!(lines[1].message.ends_with("no models listed"));
    }

    #[test]
    fn runtime_checks() {
        let path = PathBuf::from("/cfg.toml");
        let ok = check_runtime(&Ok((Config::default(), path.clone())), DEFAULT_TIMEOUT);
        assert_eq!(ok.status, Status::Pass);
        assert!(ok.message.contains("offline"));

        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut c = Config::default();
        c.runtime = RuntimeConfig::OpenAi(OpenAiConfig {
            http: HttpConfig {
                base_url: Some(format!("http://127.0.0.1:{port}/v1")),
                ..HttpConfig::default()
            },
            ..OpenAiConfig::default()
        });
        let up = check_runtime(&Ok((c.clone(), path.clone())), DEFAULT_TIMEOUT);
        assert_eq!(up.status, Status::Pass, "{up:?}");
        drop(listener);
        let down = check_runtime(&Ok((c, path.clone())), DEFAULT_TIMEOUT);
        assert_eq!(down.status, Status::Fail);
        assert!(
            down.message.contains(&format!("127.0.0.1:{port}")),
            "{down:?}"
        );
        assert!(down.fix.unwrap().contains("/cfg.toml"));

        let bad = check_runtime(
            &Err(Error::new(
                ErrorCode::ConfigInvalid,
                "runtime.kind = \"gpt\" is not available",
            )),
            DEFAULT_TIMEOUT,
        );
        assert_eq!(bad.status, Status::Fail);
        assert!(bad.message.contains("runtime.kind"));
    }

    #[test]
    fn report_text_and_json() {
        let r = Report {
            checks: vec![
                pass("A", "fine".into()),
                fail("A", "broken".into(), "do this".into()),
                Check {
                    section: "B".into(),
                    status: Status::Skip,
                    message: "skipped".into(),
                    fix: None,
                },
            ],
        };
        assert!(!r.ok());
        let text = r.to_text();
        assert_eq!(
            text,
            "A\n  ✓ fine\n  ✗ broken\n    → do this\nB\n  - skipped\n\n1 check failed.\n"
        );
        let j = r.to_json();
        assert_eq!(j["ok"], false);
        assert_eq!(j["checks"][1]["status"], "fail");
        assert_eq!(j["checks"][1]["fix"], "do this");
    }
}
