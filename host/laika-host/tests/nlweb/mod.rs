//! A real `laika-host serve` on a loopback port with a temporary data dir
//! (history seeded through `laika-host replay`), and a raw HTTP/1.1 client,
//! so tests can send exactly the bytes an attacker would. Shared by the
//! `serve` tests and the `serve_bench` example.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The pages the seeded history read: three sites, so a bare name can be
/// ambiguous.
pub const PAGES: [(&str, &str, &str); 3] = [
    (
        "https://docs.example.com/rust/async",
        "Async Rust in practice",
        "H1: Async Rust in practice\nAn executor polls futures until they are ready.\nTokio is the executor most servers use; it runs tasks on a pool of worker threads.\nBlocking code must run on spawn_blocking so the workers stay free.",
    ),
    (
        "https://example.org/recipes/pumpkin-muffins",
        "Pumpkin protein muffins",
        "H1: Pumpkin protein muffins\nThese breakfast muffins are protein rich: Greek yogurt and oats give 12 grams per muffin.\nA teaspoon of cinnamon and a pinch of nutmeg make them taste of autumn.\nBake at 180 degrees for 22 minutes.",
    ),
    (
        "https://blog.example.net/travel/night-trains",
        "Night trains return",
        "H1: Night trains return\nThe sleeper from Brussels to Prague runs three nights a week.\nA couchette bed starts at 49 euros; a private compartment costs up to 290 euros.",
    ),
];

pub struct Served {
    pub child: Child,
    pub port: u16,
    pub token: String,
    pub dir: tempfile::TempDir,
    pub stdout_line: String,
    pub bin: PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn base_command(bin: &Path, dir: &Path) -> Command {
    let mut c = Command::new(bin);
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("LAIKA_CONFIG", dir.join("config.toml"))
        .env("LAIKA_DATA_DIR", dir)
        .stdin(Stdio::null());
    c
}

/// Runs a command that must succeed; its stdout.
fn succeed(command: &mut Command) -> Vec<u8> {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Writes the history: one summarize turn per page, with the builtin runtime.
pub fn seed(bin: &Path, dir: &Path, pages: &[(&str, &str, &str)]) {
    let mut lines = vec![json!({"type": "hello", "id": "h", "protocol": {"name": "laika.wire", "version": 1}, "client": {"name": "test", "version": "1"}}).to_string()];
    for (i, (url, title, text)) in pages.iter().enumerate() {
        lines.push(
            json!({
                "type": "turn", "id": format!("t{i}"),
                "message": {"text": format!("Summarize {title}")},
                "task": {"name": "web.summarize", "args": {}},
                "tab": {"url": url, "title": title},
                "observation": {"summary": {"doc_type": "web.observation.summary.v1", "url": url, "title": title, "text": text}}
            })
            .to_string(),
        );
    }
    let file = dir.join("seed.ndjson");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    succeed(
        base_command(bin, dir)
            .args(["replay"])
            .arg(&file)
            .arg("--data-dir")
            .arg(dir),
    );
}

/// Starts `serve` on a free loopback port. `config` is the config file's
/// text; `env` adds variables (a scripted runtime, a promise delay…).
pub fn serve(
    bin: &Path,
    config: &str,
    env: &[(&str, &str)],
    pages: &[(&str, &str, &str)],
) -> Served {
    serve_prepared(bin, config, env, pages, |_| {})
}

/// `serve`, after `prepare` has had the seeded data dir (to add what the
/// history alone does not hold, such as collections).
pub fn serve_prepared(
    bin: &Path,
    config: &str,
    env: &[(&str, &str)],
    pages: &[(&str, &str, &str)],
    prepare: impl FnOnce(&Path),
) -> Served {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    seed(bin, dir.path(), pages);
    prepare(dir.path());
    let mut c = base_command(bin, dir.path());
    c.args(["serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .split("http://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    let token = env
        .iter()
        .find(|(k, _)| *k == "LAIKA_SERVE_TOKEN")
        .map(|(_, v)| v.to_string())
        .unwrap_or_else(|| {
            std::fs::read_to_string(dir.path().join("serve-token"))
                .unwrap()
                .trim()
                .to_owned()
        });
    Served {
        child,
        port,
        token,
        dir,
        stdout_line: line,
        bin: bin.to_owned(),
    }
}

#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {:?}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The SSE events' data, each parsed as JSON (comments skipped).
    pub fn events(&self) -> Vec<Value> {
        self.body
            .split("\n\n")
            .filter_map(|block| {
                let data: Vec<&str> = block
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                (!data.is_empty()).then(|| {
                    let text = data.join("\n");
                    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text:?}"))
                })
            })
            .collect()
    }
}

impl Served {
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        s
    }

    /// One request with the token and the right Host; `extra` headers are
    /// added as given.
    pub fn request(
        &self,
        method: &str,
        target: &str,
        body: Option<&Value>,
        extra: &[(&str, &str)],
    ) -> Reply {
        let mut headers = vec![
            ("Host".to_owned(), self.host()),
            ("Authorization".to_owned(), format!("Bearer {}", self.token)),
        ];
        headers.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let body = body.map(|b| b.to_string());
        send(self.connect(), method, target, &headers, body.as_deref())
    }

    pub fn post(&self, target: &str, body: &Value) -> Reply {
        self.request("POST", target, Some(body), &[])
    }

    pub fn get(&self, target: &str) -> Reply {
        self.request("GET", target, None, &[])
    }

    /// `laika-host history …` on this server's data dir, as JSON.
    pub fn history(&self, args: &[&str]) -> Value {
        let stdout = succeed(
            base_command(&self.bin, self.dir.path())
                .arg("history")
                .args(args),
        );
        serde_json::from_slice(&stdout).unwrap()
    }
}

/// Sends a request (`Connection: close`) and reads the whole response.
pub fn send(
    mut stream: TcpStream,
    method: &str,
    target: &str,
    headers: &[(String, String)],
    body: Option<&str>,
) -> Reply {
    let mut head = format!("{method} {target} HTTP/1.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        head.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            b.len()
        ));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    if let Some(b) = body {
        stream.write_all(b.as_bytes()).unwrap();
    }
    read_reply(stream)
}

/// Reads one response to the end of the connection.
pub fn read_reply(mut stream: TcpStream) -> Reply {
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    parse_reply(&raw)
}

pub fn parse_reply(raw: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(raw).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || tail.len() < n {
            break;
        }
        out.push_str(&tail[..n]);
        rest = tail[n..].trim_start_matches("\r\n");
    }
    out
}
