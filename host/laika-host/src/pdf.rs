//! `pdf.read`: the text of a PDF the extension fetched, as an observation
//! the extension sends with turns about it (docs/wire-protocol.md#pdfread).
//!
//! The bytes are decoded and checked against the size cap here; the parser
//! ([`extract`]) runs in a child process ([`isolate`]) with a memory limit
//! and a deadline, so a hostile file ends in a coded error. Each page with
//! text becomes one chunk (a long page several), whose `url` is the PDF's
//! address with `#page=N`: the model sees the page, and a citation opens
//! the viewer there.

pub mod extract;
pub mod isolate;

use base64::Engine;
use extract::PageText;
use laika_protocol::error::{Error, ErrorCode, Result};
use laika_protocol::event::PdfRead;
use laika_protocol::observation::{
    Chunk, Observation, Summary, CHUNK_DOC_TYPE, MAX_CHUNKS, SUMMARY_DOC_TYPE,
};
use laika_protocol::wire::{MAX_PDF_BYTES, MAX_PDF_PAGES};
use std::path::PathBuf;
use std::time::Duration;

/// The longest one PDF may take to read.
pub const PDF_TIMEOUT: Duration = Duration::from_secs(30);
/// The most text one PDF may give, in bytes: its observation comes back
/// with every turn and must fit an inbound frame.
pub const MAX_TEXT_BYTES: usize = 16 << 20;
/// A page with more text than this is sent as several chunks, so a
/// question over a long page can be given its relevant part.
const PIECE_CHARS: usize = 8_000;

/// Where the parser runs.
#[derive(Debug, Clone)]
pub enum Reader {
    /// In a child process: this binary's `pdf-text` (the host's own way).
    Isolated(PathBuf),
    /// On a thread of this process, abandoned at the deadline: for
    /// embedders that are not the `laika-host` binary (tests of the
    /// library). A hostile file can cost memory here.
    InProcess,
}

impl Reader {
    /// This binary in a child process, when it can be named.
    pub fn isolated() -> Reader {
        std::env::current_exe()
            .map(Reader::Isolated)
            .unwrap_or(Reader::InProcess)
    }
}

/// Reads a `pdf.read` request.
pub fn read(reader: &Reader, url: &str, title: Option<&str>, data: &str) -> Result<PdfRead> {
    if url.trim().is_empty() {
        return Err(Error::invalid_request("pdf.read needs the PDF's url"));
    }
    // Refused before decoding: base64 is 4 chars for every 3 bytes.
    if data.len() / 4 * 3 > MAX_PDF_BYTES + 3 {
        return Err(isolate::too_large(MAX_PDF_BYTES));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| Error::invalid_request(format!("pdf.read data is not base64: {e}")))?;
    if bytes.len() > MAX_PDF_BYTES {
        return Err(isolate::too_large(MAX_PDF_BYTES));
    }
    let pages = match reader {
        Reader::Isolated(program) => isolate::pages(
            program,
            bytes,
            &isolate::Bounds {
                max_bytes: MAX_PDF_BYTES,
                max_pages: MAX_PDF_PAGES,
                timeout: PDF_TIMEOUT,
                max_output: MAX_TEXT_BYTES * 2,
            },
        )?,
        Reader::InProcess => in_process(bytes)?,
    };
    observation(url, title, &pages)
}

fn in_process(bytes: Vec<u8>) -> Result<Vec<PageText>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(extract::pages(&bytes, MAX_PDF_PAGES));
    });
    rx.recv_timeout(PDF_TIMEOUT).unwrap_or_else(|_| {
        Err(Error::new(
            ErrorCode::PdfTimeout,
            format!(
                "reading this PDF took longer than {} s: Laika stopped",
                PDF_TIMEOUT.as_secs()
            ),
        ))
    })
}

/// The observation of a PDF at `url` whose pages read `pages`.
pub fn observation(url: &str, title: Option<&str>, pages: &[PageText]) -> Result<PdfRead> {
    let base = url.split('#').next().unwrap_or(url).trim();
    let title = title
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .unwrap_or_else(|| file_name(base));
    let texts: Vec<String> = pages.iter().map(|p| tidy(&p.text)).collect();
    let pages_without_text: Vec<u32> = pages
        .iter()
        .zip(&texts)
        .enumerate()
        .filter(|(_, (p, t))| !p.read || !t.chars().any(char::is_alphanumeric))
        .map(|(i, _)| page_number(i))
        .collect();
    if pages_without_text.len() == pages.len() {
        return Err(Error::new(
            ErrorCode::PdfNoText,
            format!(
                "this PDF has no text to read ({}): it is probably scanned images; \
                 Laika does not read text in images",
                count(pages.len(), "page")
            ),
        ));
    }
    let total: usize = texts.iter().map(String::len).sum();
    if total > MAX_TEXT_BYTES {
        return Err(Error::new(
            ErrorCode::PdfTooLarge,
            format!(
                "this PDF's text is over {} MiB, the most Laika reads",
                MAX_TEXT_BYTES >> 20
            ),
        ));
    }
    let with_text = || {
        texts
            .iter()
            .enumerate()
            .filter(|(i, _)| !pages_without_text.contains(&page_number(*i)))
    };
    let mut pieces: Vec<(u32, &str)> = with_text()
        .flat_map(|(i, t)| pieces(t).into_iter().map(move |p| (page_number(i), p)))
        .collect();
    if pieces.len() > MAX_CHUNKS {
        pieces = with_text()
            .map(|(i, t)| (page_number(i), t.as_str()))
            .collect();
    }
    let chunk_count = u32::try_from(pieces.len()).unwrap_or(u32::MAX);
    let chunks = pieces
        .into_iter()
        .enumerate()
        .map(|(i, (page, text))| Chunk {
            doc_type: CHUNK_DOC_TYPE.into(),
            url: format!("{base}#page={page}"),
            title: title.clone(),
            chunk_index: page_number(i),
            chunk_count,
            text: text.to_owned(),
        })
        .collect();
    let mut text = format!("PDF document, {}.", count(pages.len(), "page"));
    if !pages_without_text.is_empty() {
        text.push_str(&format!(
            " {} no text (scanned images or drawings): {}.",
            if pages_without_text.len() == 1 {
                "One page has"
            } else {
                "Some pages have"
            },
            page_list(&pages_without_text)
        ));
    }
    let observation = Observation {
        summary: Summary {
            doc_type: SUMMARY_DOC_TYPE.into(),
            url: base.to_owned(),
            title,
            text,
            ..Summary::default()
        },
        chunks,
        ..Observation::default()
    };
    observation.validate()?;
    Ok(PdfRead {
        observation,
        pages: u32::try_from(pages.len()).unwrap_or(u32::MAX),
        pages_without_text,
    })
}

fn page_number(index: usize) -> u32 {
    u32::try_from(index + 1).unwrap_or(u32::MAX)
}

fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// "p. 3, 7, 9" (the first ten, then how many more).
fn page_list(pages: &[u32]) -> String {
    let shown: Vec<String> = pages.iter().take(10).map(u32::to_string).collect();
    let more = pages.len().saturating_sub(10);
    let mut s = format!("p. {}", shown.join(", "));
    if more > 0 {
        s.push_str(&format!(" and {more} more"));
    }
    s
}

/// The last segment of the address's path, for a PDF without a title.
fn file_name(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    path.rsplit('/')
        .find(|s| !s.is_empty())
        .unwrap_or(path)
        .to_owned()
}

/// Page text as a reader sees it: trailing spaces gone, runs of blank
/// lines as one.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines().map(str::trim_end) {
        if line.trim().is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}

/// A page's text in pieces of at most about [`PIECE_CHARS`], cut at a
/// paragraph, line or word break where one is near.
fn pieces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while rest.chars().count() > PIECE_CHARS {
        let limit = rest
            .char_indices()
            .nth(PIECE_CHARS)
            .map_or(rest.len(), |(i, _)| i);
        let window = rest.get(..limit).unwrap_or(rest);
        let floor = limit / 2;
        let cut = ["\n\n", "\n", " "]
            .iter()
            .find_map(|sep| window.rfind(sep).filter(|&i| i > floor))
            .unwrap_or(limit);
        let (head, tail) = rest.split_at(cut);
        out.push(head.trim_end());
        rest = tail.trim_start();
    }
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(text: &str) -> PageText {
        PageText {
            text: text.into(),
            read: true,
        }
    }

    #[test]
    fn chunks_name_their_page_and_skip_pages_without_text() {
        let read = observation(
            "https://example.com/paper.pdf#view=fit",
            None,
            &[
                page("Abstract\n\n\n\nWe study cats.   "),
                page("  \n "),
                page("Results: cats purr."),
            ],
        )
        .map_err(|e| e.to_string());
        let read = read.as_ref().expect("observation");
        assert_eq!(read.pages, 3);
        assert_eq!(read.pages_without_text, vec![2]);
        let obs = &read.observation;
        assert_eq!(obs.summary.url, "https://example.com/paper.pdf");
        assert_eq!(obs.summary.title, "paper.pdf");
        assert!(obs.summary.text.contains("3 pages"), "{}", obs.summary.text);
        assert!(obs.summary.text.contains("p. 2"), "{}", obs.summary.text);
        let urls: Vec<&str> = obs.chunks.iter().map(|c| c.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "https://example.com/paper.pdf#page=1",
                "https://example.com/paper.pdf#page=3"
            ]
        );
        assert_eq!(obs.chunks[0].text, "Abstract\n\nWe study cats.");
        assert_eq!(obs.chunks[1].chunk_index, 2);
        assert_eq!(obs.chunks[1].chunk_count, 2);
    }

    #[test]
    fn a_long_page_is_several_chunks_of_that_page() {
        let long = "word ".repeat(4_000);
        let read = observation(
            "https://e.com/a.pdf",
            Some("A"),
            &[page("short"), page(&long)],
        )
        .map_err(|e| e.to_string());
        let chunks = &read.as_ref().expect("observation").observation.chunks;
        assert_eq!(chunks.len(), 4);
        assert!(chunks[1..].iter().all(|c| c.url.ends_with("#page=2")));
        assert!(chunks.iter().all(|c| c.text.chars().count() <= PIECE_CHARS));
        let joined: usize = chunks[1..]
            .iter()
            .map(|c| c.text.split_whitespace().count())
            .sum();
        assert_eq!(joined, 4_000, "no word lost at the cuts");
    }

    #[test]
    fn a_pdf_without_text_says_so() {
        let e = observation("https://e.com/scan.pdf", None, &[page(""), page(" \n")]).err();
        let e = e.expect("an error");
        assert_eq!(e.code, ErrorCode::PdfNoText);
        assert!(e.message.contains("2 pages"), "{}", e.message);
        assert!(e.message.contains("scanned"), "{}", e.message);
    }

    #[test]
    fn bad_data_and_oversize_are_coded() {
        let e = read(
            &Reader::InProcess,
            "https://e.com/a.pdf",
            None,
            "%%%not base64",
        )
        .err();
        assert_eq!(e.map(|e| e.code), Some(ErrorCode::InvalidRequest));
        let huge = "A".repeat(MAX_PDF_BYTES / 3 * 4 + 64);
        let e = read(&Reader::InProcess, "https://e.com/a.pdf", None, &huge).err();
        assert_eq!(e.map(|e| e.code), Some(ErrorCode::PdfTooLarge));
        let not_pdf = base64::engine::general_purpose::STANDARD.encode(b"<html>hello</html>");
        let e = read(&Reader::InProcess, "https://e.com/a.pdf", None, &not_pdf).err();
        assert_eq!(e.map(|e| e.code), Some(ErrorCode::PdfUnreadable));
    }
}
