//! The stdio loop of the native-messaging host.
//!
//! Four threads, in the style of rust-analyzer's `lsp-server`: a reader
//! turns the input into [`Incoming`] values, a parser takes the frames too
//! large to parse on the reading path, the caller's handler runs on the
//! thread that called [`serve`], and a writer owns the output and turns
//! queued messages into frames. Framing and parsing live in [`crate::frame`].
//!
//! Invariants kept here:
//! - Only frames are written to the output, none with a body above the
//!   outbound limit (at most 1 MiB); the output is flushed as soon as no
//!   other message waits to be written, so messages queued together go out
//!   together and none waits for a later one.
//! - The handler sees every inbound frame in order, then exactly one
//!   [`Incoming::Closed`] — except that a `ping` overtakes frames still
//!   waiting for a large frame's parse, so it is answered while that parse
//!   runs. Nothing else overtakes: a `cancel` or a `tool_result` after a turn
//!   reaches the handler after that turn.
//! - One large frame is parsed at a time; the reader reads ahead of it only
//!   until the next large frame is complete, so a parse costs what
//!   [`parse_message`] costs and at most one more frame waits beside it.
//! - Every message queued before shutdown is written unless the output
//!   fails; a failed output (the browser went away) ends writing quietly and
//!   makes [`Outbox::send`] return `false`.
//! - Channels are bounded, so a flooding peer waits in the pipe rather than
//!   growing our memory.

use crate::frame::{
    encode_message, parse_message, FrameDecoder, DEFAULT_MAX_INBOUND_FRAME, DEFAULT_MAX_JSON_DEPTH,
    MAX_OUTBOUND_FRAME,
};
use crate::stage_times;
use laika_protocol::error::Error;
use serde_json::{Map, Value};
use std::io::{self, ErrorKind, Read, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;

/// Bytes asked of the input per read.
const READ_CHUNK: usize = 64 << 10;
/// Smallest accepted outbound limit: room for a part envelope and its data.
pub const MIN_OUTBOUND_FRAME: usize = 1 << 10;
/// Inbound messages read ahead of the handler.
const INBOX_CAPACITY: usize = 4;
/// Bytes the writer gathers before a write to the output.
const WRITE_BUFFER: usize = 64 << 10;
/// Outbound messages queued ahead of the writer.
const OUTBOX_CAPACITY: usize = 64;
/// Frames up to this size are parsed on the reading path (well under a
/// millisecond); larger ones go to the parser thread.
pub const PARSE_INLINE_MAX: usize = 64 << 10;
/// Frames waiting behind a large frame's parse before the reader waits too.
const PARSER_CAPACITY: usize = 16;

/// What the reader hands to the handler.
#[derive(Debug)]
pub enum Incoming {
    /// A well-formed message object.
    Message(Map<String, Value>),
    /// A frame that could not be used. The stream is still in sync unless the
    /// code is `FRAME_TOO_LARGE` or `FRAME_TRUNCATED`, after which nothing more
    /// is read.
    Malformed(Error),
    /// The input ended; sent once, last.
    Closed,
}

/// Queue of messages for the writer. Cheap to clone into worker threads.
#[derive(Clone, Debug)]
pub struct Outbox(SyncSender<Value>);

impl Outbox {
    /// Queues a message, waiting if the writer is behind. Returns `false` once
    /// the writer has stopped (output closed or failed); the message is dropped.
    pub fn send(&self, msg: Value) -> bool {
        self.0.send(msg).is_ok()
    }
}

/// Size limits for [`serve`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransportLimits {
    /// Largest inbound frame body; larger frames are refused unread.
    pub max_inbound_frame: usize,
    /// Deepest nesting accepted in an inbound message (capped at 127).
    pub max_json_depth: usize,
    /// Largest outbound frame body, between [`MIN_OUTBOUND_FRAME`] and
    /// [`MAX_OUTBOUND_FRAME`]; bigger messages go out as parts.
    pub max_outbound_frame: usize,
}

impl Default for TransportLimits {
    fn default() -> Self {
        TransportLimits {
            max_inbound_frame: DEFAULT_MAX_INBOUND_FRAME,
            max_json_depth: DEFAULT_MAX_JSON_DEPTH,
            max_outbound_frame: MAX_OUTBOUND_FRAME,
        }
    }
}

/// Serves one native-messaging connection until the input ends.
///
/// Calls `handler` for each inbound frame, then once with
/// [`Incoming::Closed`] (it may block there to let in-flight work finish), then
/// waits until the writer has drained every queued message. Clones of the
/// [`Outbox`] kept alive past that point keep the writer, and so `serve`,
/// waiting.
///
/// Returns `Ok(())` when the input ends or the output is closed (broken
/// pipe, connection reset). Other I/O failures still end the connection in
/// order and are then returned so the caller can log them. An outbound limit
/// outside `MIN_OUTBOUND_FRAME..=MAX_OUTBOUND_FRAME` is `InvalidInput` before
/// anything is read.
pub fn serve<R, W>(
    input: R,
    output: W,
    limits: TransportLimits,
    mut handler: impl FnMut(Incoming, &Outbox),
) -> io::Result<()>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    if !(MIN_OUTBOUND_FRAME..=MAX_OUTBOUND_FRAME).contains(&limits.max_outbound_frame) {
        return Err(io::Error::new(
            ErrorKind::InvalidInput,
            format!(
                "max_outbound_frame {} is outside {MIN_OUTBOUND_FRAME}..={MAX_OUTBOUND_FRAME}",
                limits.max_outbound_frame
            ),
        ));
    }

    let (out_tx, out_rx) = sync_channel(OUTBOX_CAPACITY);
    let max_out = limits.max_outbound_frame;
    let writer = thread::Builder::new()
        .name("laika-writer".into())
        .spawn(move || write_loop(output, out_rx, max_out))?;
    let (in_tx, in_rx) = sync_channel(INBOX_CAPACITY);
    let reader = thread::Builder::new()
        .name("laika-reader".into())
        .spawn(move || read_loop(input, in_tx, limits))?;

    let outbox = Outbox(out_tx);
    for incoming in in_rx {
        stage_times::mark("handler");
        handler(incoming, &outbox);
    }
    handler(Incoming::Closed, &outbox);
    drop(outbox);

    let read_result = join(reader, "reader");
    let write_result = join(writer, "writer");
    read_result.and(write_result)
}

fn join(handle: thread::JoinHandle<io::Result<()>>, name: &str) -> io::Result<()> {
    handle
        .join()
        .unwrap_or_else(|_| Err(io::Error::other(format!("{name} thread panicked"))))
}

/// The peer closing its end is how a native-messaging connection ends.
fn is_disconnect(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::BrokenPipe | ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted
    )
}

fn read_loop<R: Read>(
    mut input: R,
    tx: SyncSender<Incoming>,
    limits: TransportLimits,
) -> io::Result<()> {
    let order = Arc::new(Order::default());
    let (stage_tx, stage_rx) = sync_channel(PARSER_CAPACITY);
    let parser = {
        let (tx, order) = (tx.clone(), order.clone());
        let depth = limits.max_json_depth;
        thread::Builder::new()
            .name("laika-parser".into())
            .spawn(move || parse_loop(stage_rx, tx, &order, depth))?
    };
    let router = Router {
        tx,
        stage_tx,
        order,
        max_depth: limits.max_json_depth,
    };
    let result = read_frames(&mut input, &router, limits.max_inbound_frame);
    // The parser ends once it has handed on everything queued.
    drop(router);
    let parsed = parser
        .join()
        .map_err(|_| io::Error::other("parser thread panicked"));
    result.and(parsed)
}

fn read_frames<R: Read>(input: &mut R, router: &Router, max_frame: usize) -> io::Result<()> {
    let mut decoder = FrameDecoder::new(max_frame);
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) if is_disconnect(&e) => break,
            Err(e) => return Err(e),
        };
        decoder.push(buf.get(..n).unwrap_or_default());
        while let Some(frame) = decoder.next_frame() {
            stage_times::mark("frame read");
            if !router.route(frame) {
                return Ok(());
            }
        }
    }
    if let Some(e) = decoder.finish() {
        // The main loop is gone only if the handler panicked; nothing to do.
        router.in_order(Incoming::Malformed(e));
    }
    Ok(())
}

/// Where a frame goes from the reader: straight to the handler, or to the
/// parser thread behind a large frame.
struct Router {
    tx: SyncSender<Incoming>,
    stage_tx: SyncSender<Stage>,
    order: Arc<Order>,
    max_depth: usize,
}

/// What waits for the parser thread, in stream order.
enum Stage {
    /// A large frame's body, to parse.
    Body(Vec<u8>),
    /// A frame parsed on the reading path that must not overtake the frames
    /// ahead of it.
    Parsed(Incoming),
}

/// What the reader and the parser thread share about the frames queued for
/// the parser.
#[derive(Default)]
struct Order {
    state: Mutex<OrderState>,
    changed: Condvar,
}

#[derive(Default)]
struct OrderState {
    /// Stages sent to the parser and not yet handed to the handler.
    queued: usize,
    /// A large frame is queued or being parsed.
    large: bool,
    /// The parser has stopped (the handler went away).
    closed: bool,
}

impl Order {
    fn lock(&self) -> MutexGuard<'_, OrderState> {
        // The state stays consistent under any panic: a poisoned lock is used.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Router {
    /// Hands one decoded frame on. `false` once nothing more should be read:
    /// the handler is gone, or a framing error left the stream out of sync
    /// (the body of a `FRAME_TOO_LARGE` frame was never read).
    fn route(&self, frame: Result<Vec<u8>, Error>) -> bool {
        let body = match frame {
            Ok(body) => body,
            Err(e) => {
                self.in_order(Incoming::Malformed(e));
                return false;
            }
        };
        if body.len() > PARSE_INLINE_MAX {
            return self.queue_large(body);
        }
        let incoming = parse(&body, self.max_depth);
        if overtakes(&incoming) {
            return self.tx.send(incoming).is_ok();
        }
        self.in_order(incoming)
    }

    /// Sends after everything already queued for the parser.
    fn in_order(&self, incoming: Incoming) -> bool {
        let mut state = self.order.lock();
        if state.closed {
            return false;
        }
        if state.queued == 0 {
            // Only this thread queues, so nothing can get ahead of it now.
            drop(state);
            return self.tx.send(incoming).is_ok();
        }
        state.queued += 1;
        drop(state);
        self.stage_tx.send(Stage::Parsed(incoming)).is_ok()
    }

    /// Queues a large frame for the parser once the previous one is parsed.
    fn queue_large(&self, body: Vec<u8>) -> bool {
        let mut state = self.order.lock();
        while state.large && !state.closed {
            state = self
                .order
                .changed
                .wait(state)
                .unwrap_or_else(|p| p.into_inner());
        }
        if state.closed {
            return false;
        }
        state.large = true;
        state.queued += 1;
        drop(state);
        self.stage_tx.send(Stage::Body(body)).is_ok()
    }
}

/// A `ping` asks only whether the host is alive, so it may be answered
/// before frames that arrived ahead of it; no other message may.
fn overtakes(incoming: &Incoming) -> bool {
    matches!(incoming, Incoming::Message(m)
        if m.get("type").and_then(Value::as_str) == Some("ping"))
}

fn parse(body: &[u8], max_depth: usize) -> Incoming {
    match parse_message(body, max_depth) {
        Ok(msg) => Incoming::Message(msg),
        Err(e) => Incoming::Malformed(e),
    }
}

fn parse_loop(rx: Receiver<Stage>, tx: SyncSender<Incoming>, order: &Order, max_depth: usize) {
    /// Marks the parser stopped however it ends, so the reader never waits
    /// on it in vain.
    struct Closing<'a>(&'a Order);
    impl Drop for Closing<'_> {
        fn drop(&mut self) {
            self.0.lock().closed = true;
            self.0.changed.notify_all();
        }
    }
    let _closing = Closing(order);
    for stage in rx {
        let (incoming, large) = match stage {
            // The body is dropped here, before the handler works on the message.
            Stage::Body(body) => (parse(&body, max_depth), true),
            Stage::Parsed(incoming) => (incoming, false),
        };
        let sent = tx.send(incoming).is_ok();
        let mut state = order.lock();
        state.queued = state.queued.saturating_sub(1);
        state.large &= !large;
        drop(state);
        order.changed.notify_all();
        if !sent {
            return;
        }
    }
}

fn write_loop<W: Write>(output: W, rx: Receiver<Value>, max_frame: usize) -> io::Result<()> {
    // The messages of one flush go out in one write where they fit.
    let mut output = io::BufWriter::with_capacity(WRITE_BUFFER, output);
    // Ends when every Outbox is dropped and the queue is drained. Returning
    // early drops `rx`, which is what makes `Outbox::send` return false.
    let mut next = rx.recv().ok();
    while let Some(msg) = next {
        let frames = encode_message(&msg, max_frame)
            .map_err(|e| io::Error::new(ErrorKind::InvalidData, e))?;
        let mut written = frames.iter().try_for_each(|frame| output.write_all(frame));
        // Messages already queued go out with this one, in one flush.
        next = rx.try_recv().ok();
        if next.is_none() {
            written = written.and_then(|()| output.flush());
        }
        match written {
            Ok(()) => {}
            Err(e) if is_disconnect(&e) => return Ok(()),
            Err(e) => return Err(e),
        }
        if stage_times::on() {
            // Flushed, or handed to the buffer right before others.
            stage_times::mark(&format!("written {}", msg["type"].as_str().unwrap_or("?")));
        }
        if next.is_none() {
            next = rx.recv().ok();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{encode_frame, PartAssembler};
    use serde_json::json;
    use std::io::Cursor;
    use std::sync::{Arc, Mutex};

    /// An output the test can read back after `serve` returns.
    #[derive(Clone, Default)]
    struct SharedVec(Arc<Mutex<Vec<u8>>>);

    impl Write for SharedVec {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl SharedVec {
        fn frames(&self) -> Vec<Vec<u8>> {
            let bytes = self.0.lock().unwrap().clone();
            let mut dec = FrameDecoder::new(usize::MAX);
            dec.push(&bytes);
            assert_eq!(dec.finish(), None, "output is not whole frames");
            std::iter::from_fn(|| dec.next_frame())
                .map(|f| f.unwrap())
                .collect()
        }

        fn messages(&self) -> Vec<Value> {
            self.frames()
                .iter()
                .map(|f| serde_json::from_slice(f).unwrap())
                .collect()
        }
    }

    /// Hands out its bytes one per read.
    struct Trickle(Cursor<Vec<u8>>);

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let one = buf.len().min(1);
            self.0.read(&mut buf[..one])
        }
    }

    struct BrokenPipe;

    impl Write for BrokenPipe {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::new(ErrorKind::BrokenPipe, "reader went away"))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Echoes messages, reports errors as `{"type":"error"}`, counts `Closed`.
    fn echo(closed: &mut usize) -> impl FnMut(Incoming, &Outbox) + '_ {
        move |incoming, outbox| match incoming {
            Incoming::Message(m) => {
                outbox.send(Value::Object(m));
            }
            Incoming::Malformed(e) => {
                outbox.send(json!({"type": "error", "code": e.code, "message": e.message}));
            }
            Incoming::Closed => *closed += 1,
        }
    }

    fn frames_of(texts: &[&str]) -> Vec<u8> {
        texts
            .iter()
            .flat_map(|t| encode_frame(t.as_bytes()))
            .collect()
    }

    fn run<R: Read + Send + 'static>(input: R, limits: TransportLimits) -> (Vec<Value>, usize) {
        let out = SharedVec::default();
        let mut closed = 0;
        serve(input, out.clone(), limits, echo(&mut closed)).unwrap();
        (out.messages(), closed)
    }

    #[test]
    fn echoes_several_frames_from_one_read() {
        let input = frames_of(&[r#"{"n":1}"#, r#"{"n":2}"#, r#"{"n":3}"#]);
        let (msgs, closed) = run(Cursor::new(input), TransportLimits::default());
        assert_eq!(msgs, vec![json!({"n":1}), json!({"n":2}), json!({"n":3})]);
        assert_eq!(closed, 1);
    }

    #[test]
    fn echoes_frames_split_at_every_byte() {
        let input = frames_of(&[r#"{"a":"é"}"#, "{}", r#"{"b":[1,2]}"#]);
        let (msgs, closed) = run(Trickle(Cursor::new(input)), TransportLimits::default());
        assert_eq!(msgs, vec![json!({"a":"é"}), json!({}), json!({"b":[1,2]})]);
        assert_eq!(closed, 1);
    }

    #[test]
    fn malformed_frames_in_sync_do_not_stop_reading() {
        let mut input = frames_of(&["{", "[1]", &format!("{}{}", "[".repeat(65), "]".repeat(65))]);
        input.extend(encode_frame(b"\"\xc3\x28\""));
        input.extend(frames_of(&[r#"{"ok":true}"#]));
        let (msgs, _) = run(Cursor::new(input), TransportLimits::default());
        let codes: Vec<Value> = msgs.iter().map(|m| m["code"].clone()).collect();
        let want = [
            "INVALID_JSON",
            "INVALID_REQUEST",
            "JSON_TOO_DEEP",
            "INVALID_UTF8",
        ];
        assert_eq!(codes[..4], want.map(|c| json!(c)));
        assert_eq!(codes.len(), 5);
        assert_eq!(msgs[4], json!({"ok": true}));
    }

    /// A message of about `bytes` bytes, too large to parse on the reading path.
    fn large(id: &str, bytes: usize) -> String {
        format!(
            r#"{{"type":"turn","id":"{id}","pad":"{}"}}"#,
            "x".repeat(bytes)
        )
    }

    /// What the handler saw, in order: each message's id (and its size),
    /// each error's code.
    fn seen<R: Read + Send + 'static>(input: R) -> Vec<String> {
        let out = SharedVec::default();
        serve(
            input,
            out.clone(),
            TransportLimits::default(),
            |incoming, outbox| {
                let seen = match incoming {
                    Incoming::Message(m) => match m.get("pad").and_then(Value::as_str) {
                        Some(pad) => format!("{}:{}", m["id"].as_str().unwrap_or("?"), pad.len()),
                        None => m.get("id").and_then(Value::as_str).unwrap_or("?").into(),
                    },
                    Incoming::Malformed(e) => e.code.as_str().into(),
                    Incoming::Closed => "closed".into(),
                };
                outbox.send(json!(seen));
            },
        )
        .unwrap();
        out.messages()
            .iter()
            .map(|m| m.as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn a_ping_overtakes_a_large_frame_being_parsed_and_nothing_else_does() {
        // Several MiB take the parser far longer than the reader needs for
        // the small frames after it, so the order below is the design's.
        let big = large("big", 8 << 20);
        let input = frames_of(&[
            r#"{"type":"hello","id":"h"}"#,
            &big,
            r#"{"type":"ping","id":"p1"}"#,
            r#"{"type":"cancel","id":"c","target":"big"}"#,
            r#"{"type":"ping","id":"p2"}"#,
            r#"{"type":"tool_result","id":"r"}"#,
        ]);
        assert_eq!(
            seen(Cursor::new(input)),
            ["h", "p1", "p2", "big:8388608", "c", "r", "closed"]
        );
    }

    #[test]
    fn a_ping_overtakes_a_large_frame_that_is_refused() {
        // 8 MiB of an array past the item limit: refused while parsing.
        let refused = format!(r#"{{"type":"x","id":"r","a":[{}0]}}"#, "0,".repeat(4 << 20));
        let input = frames_of(&[&refused, r#"{"type":"ping","id":"p"}"#, r#"{"n":1}"#]);
        let (msgs, _) = run(Cursor::new(input), TransportLimits::default());
        assert_eq!(msgs.len(), 3, "{msgs:?}");
        assert_eq!(msgs[0], json!({"type": "ping", "id": "p"}));
        assert_eq!(msgs[1]["code"], "INVALID_REQUEST");
        assert!(
            msgs[1]["message"].as_str().unwrap().contains("10000 items"),
            "{}",
            msgs[1]
        );
        assert_eq!(msgs[2], json!({"n": 1}));
    }

    #[test]
    fn large_frames_keep_their_order_among_themselves_and_the_rest() {
        let input = frames_of(&[
            &large("a", PARSE_INLINE_MAX),
            r#"{"type":"cancel","id":"c1"}"#,
            &large("b", 2 * PARSE_INLINE_MAX),
            &large("c", 3 * PARSE_INLINE_MAX),
            r#"{"type":"cancel","id":"c2"}"#,
            "[1]",
            r#"{"type":"cancel","id":"c3"}"#,
        ]);
        assert_eq!(
            seen(Trickle(Cursor::new(input))),
            [
                "a:65536",
                "c1",
                "b:131072",
                "c:196608",
                "c2",
                "INVALID_REQUEST",
                "c3",
                "closed"
            ]
        );
    }

    #[test]
    fn a_truncated_frame_after_a_large_one_is_reported_after_it() {
        let mut input = frames_of(&[&large("big", 4 << 20)]);
        input.extend(&frames_of(&[r#"{"type":"cancel","id":"c"}"#])[..9]);
        assert_eq!(
            seen(Cursor::new(input)),
            ["big:4194304", "FRAME_TRUNCATED", "closed"]
        );
    }

    #[test]
    fn oversize_frame_is_refused_and_reading_stops() {
        let limits = TransportLimits {
            max_inbound_frame: 16,
            ..TransportLimits::default()
        };
        let mut input = frames_of(&[r#"{"first":1}"#]);
        input.extend(frames_of(&[&format!(r#"{{"big":"{}"}}"#, "x".repeat(32))]));
        input.extend(frames_of(&[r#"{"after":1}"#]));
        let (msgs, closed) = run(Cursor::new(input), limits);
        assert_eq!(msgs.len(), 2, "{msgs:?}");
        assert_eq!(msgs[0], json!({"first": 1}));
        assert_eq!(msgs[1]["code"], "FRAME_TOO_LARGE");
        assert!(msgs[1]["message"].as_str().unwrap().contains("16"));
        assert_eq!(closed, 1);
    }

    #[test]
    fn truncated_frame_at_eof_is_reported() {
        let mut input = frames_of(&[r#"{"whole":1}"#]);
        let cut = frames_of(&[r#"{"cut":1}"#]);
        input.extend(&cut[..7]);
        let (msgs, closed) = run(Cursor::new(input), TransportLimits::default());
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[0], json!({"whole": 1}));
        assert_eq!(msgs[1]["code"], "FRAME_TRUNCATED");
        assert!(msgs[1]["message"].as_str().unwrap().contains("expected 9"));
        assert_eq!(closed, 1);
    }

    #[test]
    fn large_outbound_message_goes_as_parts() {
        let big = json!({"id": "r1", "type": "render", "text": "ab\"c\\".repeat((3 << 20) / 5)});
        let out = SharedVec::default();
        let sent = big.clone();
        serve(
            Cursor::new(frames_of(&["{}"])),
            out.clone(),
            TransportLimits::default(),
            move |incoming, outbox| {
                if let Incoming::Message(_) = incoming {
                    assert!(outbox.send(sent.clone()));
                }
            },
        )
        .unwrap();
        let frames = out.frames();
        assert!(frames.len() >= 3, "{} frames", frames.len());
        let mut asm = PartAssembler::new();
        let mut whole = None;
        for f in &frames {
            assert!(f.len() <= MAX_OUTBOUND_FRAME, "{} bytes", f.len());
            let part: Value = serde_json::from_slice(f).unwrap();
            assert_eq!(part["type"], "part");
            assert_eq!(part["part_of"], "r1");
            if let Some(v) = asm.push(part).unwrap() {
                whole = Some(v);
            }
        }
        assert_eq!(whole, Some(big));
    }

    #[test]
    fn broken_pipe_ends_quietly_and_send_reports_it() {
        let input = frames_of(&[r#"{"n":1}"#, r#"{"n":2}"#]);
        let mut accepted_after_close = true;
        let result = serve(
            Cursor::new(input),
            BrokenPipe,
            TransportLimits::default(),
            |incoming, outbox| match incoming {
                Incoming::Message(m) => {
                    outbox.send(Value::Object(m));
                }
                Incoming::Closed => {
                    // The writer stops on its first failed write; after that
                    // every send must report false rather than queue forever.
                    for _ in 0..5_000 {
                        if !outbox.send(json!({"late": true})) {
                            accepted_after_close = false;
                            break;
                        }
                        thread::sleep(std::time::Duration::from_millis(1));
                    }
                }
                Incoming::Malformed(e) => panic!("unexpected {e}"),
            },
        );
        assert!(result.is_ok(), "{result:?}");
        assert!(!accepted_after_close);
    }

    #[test]
    fn other_write_errors_are_returned_after_shutdown() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::new(ErrorKind::StorageFull, "disk full"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut closed = 0;
        let err = serve(
            Cursor::new(frames_of(&["{}"])),
            Full,
            TransportLimits::default(),
            echo(&mut closed),
        )
        .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::StorageFull);
        assert_eq!(closed, 1);
    }

    #[test]
    fn outbound_limit_must_be_sane() {
        for bad in [MIN_OUTBOUND_FRAME - 1, MAX_OUTBOUND_FRAME + 1] {
            let limits = TransportLimits {
                max_outbound_frame: bad,
                ..TransportLimits::default()
            };
            let err = serve(
                Cursor::new(Vec::new()),
                SharedVec::default(),
                limits,
                |_, _| {},
            )
            .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput);
        }
    }

    #[test]
    fn queued_messages_drain_after_closed() {
        let out = SharedVec::default();
        serve(
            Cursor::new(Vec::new()),
            out.clone(),
            TransportLimits::default(),
            |incoming, outbox| {
                if let Incoming::Closed = incoming {
                    let worker = outbox.clone();
                    // In-flight work finishing on another thread during Closed.
                    thread::spawn(move || {
                        for n in 0..200 {
                            assert!(worker.send(json!({"n": n})));
                        }
                    })
                    .join()
                    .unwrap();
                }
            },
        )
        .unwrap();
        let msgs = out.messages();
        assert_eq!(msgs.len(), 200);
        assert_eq!(msgs[199], json!({"n": 199}));
    }
}
