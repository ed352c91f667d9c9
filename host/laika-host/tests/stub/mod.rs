//! A stub LLM server on 127.0.0.1 for fault tests: it records each request
//! and plays a script of writes, pauses and stalls back. Bounded: it serves
//! at most `MAX_CONNECTIONS`, lives at most `LIFETIME`, and stops on drop.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

// Room for the host's context-window probes besides the requests, and for
// a page summarized in a few dozen parts.
const MAX_CONNECTIONS: usize = 64;
const LIFETIME: Duration = Duration::from_secs(60);
/// How long a stalled response waits for the client to give up.
const MAX_HOLD: Duration = Duration::from_secs(20);

pub enum Step {
    Write(Vec<u8>),
    Sleep(Duration),
    /// Send nothing more, keep the connection open until the client closes it.
    Hold,
}

#[derive(Debug, Clone, Default)]
pub struct Seen {
    pub head: String,
    pub body: Value,
    /// The client closed the connection while the stub was writing or holding.
    pub closed_by_client: bool,
}

type Respond = dyn Fn(&Value, usize) -> Vec<Step> + Send + Sync;
type Probe = dyn Fn(&str) -> Option<Value> + Send + Sync;

pub struct Stub {
    pub url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// Context-window probes (`GET …`, `POST /api/show`) received, by path.
    probes: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Stub {
    /// `respond(request_body, index)` gives the script for each request.
    /// The host's context-window probes are answered 404 and not counted.
    pub fn start(respond: impl Fn(&Value, usize) -> Vec<Step> + Send + Sync + 'static) -> Stub {
        Stub::with_probes(|_| None, respond)
    }

    /// Like [`Stub::start`], and `probe(path)` answers the host's
    /// context-window probes (`/props`, `/v1/models`, …): a JSON body, or
    /// `None` for a 404.
    pub fn with_probes(
        probe: impl Fn(&str) -> Option<Value> + Send + Sync + 'static,
        respond: impl Fn(&Value, usize) -> Vec<Step> + Send + Sync + 'static,
    ) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let probes = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let respond: Arc<Respond> = Arc::new(respond);
        let probe: Arc<Probe> = Arc::new(probe);
        let (seen2, stop2, probes2) = (seen.clone(), stop.clone(), probes.clone());
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            let mut served = 0;
            let mut workers = Vec::new();
            while !stop2.load(Ordering::SeqCst) && started.elapsed() < LIFETIME {
                match listener.accept() {
                    Ok((stream, _)) if served < MAX_CONNECTIONS => {
                        served += 1;
                        let (seen, stop, respond) = (seen2.clone(), stop2.clone(), respond.clone());
                        let (probe, probes) = (probe.clone(), probes2.clone());
                        workers.push(std::thread::spawn(move || {
                            serve(stream, &seen, &stop, &*respond, &*probe, &probes)
                        }));
                    }
                    Ok(_) => {}
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
            for w in workers {
                let _ = w.join();
            }
        });
        Stub {
            url,
            seen,
            probes,
            stop,
            thread: Some(thread),
        }
    }

    pub fn probes(&self) -> Vec<String> {
        self.probes.lock().unwrap().clone()
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Waits (up to 10 s) until `n` requests were received.
    pub fn wait_requests(&self, n: usize) -> Vec<Seen> {
        let end = Instant::now() + Duration::from_secs(10);
        while self.seen().len() < n && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.seen()
    }

    /// Waits (up to `within`) until request `i`'s connection was closed by the client.
    pub fn wait_closed(&self, i: usize, within: Duration) -> bool {
        let end = Instant::now() + within;
        loop {
            if self.seen().get(i).is_some_and(|s| s.closed_by_client) {
                return true;
            }
            if Instant::now() >= end {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(
    mut stream: TcpStream,
    seen: &Mutex<Vec<Seen>>,
    stop: &AtomicBool,
    respond: &Respond,
    probe: &Probe,
    probes: &Mutex<Vec<String>>,
) {
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let Some((head, body)) = read_request(&mut stream) else {
        return;
    };
    let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
    if head.starts_with("GET ") || path.ends_with("/api/show") {
        probes.lock().unwrap().push(path.clone());
        let steps = match probe(&path) {
            Some(v) => {
                let body = v.to_string();
                vec![Step::Write(
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    )
                    .into_bytes(),
                )]
            }
            None => status(404, "{}"),
        };
        for step in steps {
            if let Step::Write(bytes) = step {
                let _ = stream.write_all(&bytes);
            }
        }
        return;
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let index = {
        let mut s = seen.lock().unwrap();
        s.push(Seen {
            head,
            body: body.clone(),
            closed_by_client: false,
        });
        s.len() - 1
    };
    let mark_closed = || seen.lock().unwrap()[index].closed_by_client = true;
    for step in respond(&body, index) {
        match step {
            Step::Write(bytes) => {
                if stream
                    .write_all(&bytes)
                    .and_then(|_| stream.flush())
                    .is_err()
                {
                    mark_closed();
                    return;
                }
            }
            Step::Sleep(d) => std::thread::sleep(d),
            Step::Hold => {
                stream
                    .set_read_timeout(Some(Duration::from_millis(20)))
                    .unwrap();
                let end = Instant::now() + MAX_HOLD;
                let mut buf = [0u8; 256];
                while Instant::now() < end && !stop.load(Ordering::SeqCst) {
                    match stream.read(&mut buf) {
                        Ok(0) => {
                            mark_closed();
                            return;
                        }
                        Ok(_) => {}
                        Err(e)
                            if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                        Err(_) => {
                            mark_closed();
                            return;
                        }
                    }
                }
                return;
            }
        }
    }
}

fn read_request(stream: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    let head_end = loop {
        if let Some(pos) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
        let n = stream.read(&mut buf).ok()?;
        if n == 0 || data.len() > 1 << 20 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).to_string();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = data[head_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&buf[..n]);
    }
    Some((head, body))
}

/// Response headers for a 200 with `content_type`, delimited by close.
pub fn ok_head(content_type: &str) -> Step {
    Step::Write(
        format!("HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n")
            .into_bytes(),
    )
}

pub fn status(code: u16, body: &str) -> Vec<Step> {
    vec![Step::Write(
        format!(
            "HTTP/1.1 {code} Oops\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )]
}

/// One SSE chat chunk carrying `content`.
pub fn sse_content(content: &str) -> String {
    let chunk = json!({"model": "stub-model", "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}]});
    format!("data: {chunk}\n\n")
}

/// A whole SSE answer: `text` in pieces of `piece` chars, then `finish`.
pub fn sse_answer(text: &str, piece: usize, finish: &str) -> Vec<Step> {
    let mut steps = vec![
        ok_head("text/event-stream"),
        Step::Write(b": ping\n\n".to_vec()),
        Step::Write(
            b"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"thinking...\"}}]}\n\n"
                .to_vec(),
        ),
    ];
    let chars: Vec<char> = text.chars().collect();
    for part in chars.chunks(piece.max(1)) {
        steps.push(Step::Write(
            sse_content(&part.iter().collect::<String>()).into_bytes(),
        ));
    }
    let end = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]});
    steps.push(Step::Write(
        format!("data: {end}\n\ndata: {{\"choices\":[],\"usage\":{{\"completion_tokens\":5}}}}\n\ndata: [DONE]\n\n").into_bytes(),
    ));
    steps
}

/// A valid llmcp response packet answering the request packet in the user
/// message of a chat request body.
pub fn answer_for(body: &Value, text: &str) -> String {
    let packet: Value =
        serde_json::from_str(body["messages"][1]["content"].as_str().unwrap_or("{}"))
            .unwrap_or(Value::Null);
    json!({
        "protocol": {"name": "laika.llmcp", "version": 1},
        "id": laika_core::ambient::Ambient::new_id(&laika_runtime::SystemAmbient),
        "type": "response",
        "created_at": laika_core::ambient::Ambient::now_iso8601(&laika_runtime::SystemAmbient),
        "conversation": packet["conversation"],
        "sender": {"role": "assistant"},
        "in_reply_to": {"request_id": packet["id"]},
        "assistant": {
            "title": "Answer",
            "render": {"type": "doc", "children": [{"type": "paragraph", "children": [{"type": "text", "text": text}]}]},
            "citations": []
        },
        "tool_calls": []
    })
    .to_string()
}
