//! The parser's entry point: a PDF's bytes to the text of each page, with
//! pdf-extract over lopdf. Every failure is a coded error; a panic inside
//! the parser (they happen on malformed files) is caught, for the document
//! or for the one page that caused it. Time and memory are bounded by the
//! caller ([`super::isolate`] runs this in a child process).

use laika_protocol::error::{Error, ErrorCode, Result};
use serde::{Deserialize, Serialize};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// How far into the file the `%PDF-` header may start (readers accept a
/// little junk before it).
const HEADER_WINDOW: usize = 1024;

/// One page's text, and whether the parser could read the page at all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageText {
    pub text: String,
    pub read: bool,
}

fn unreadable(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::PdfUnreadable, message)
}

/// The text of every page, in page order; more than `max_pages` pages is
/// `PDF_TOO_LARGE` before any page is read.
pub fn pages(bytes: &[u8], max_pages: usize) -> Result<Vec<PageText>> {
    let head = bytes.get(..HEADER_WINDOW).unwrap_or(bytes);
    if !head.windows(5).any(|w| w == b"%PDF-") {
        return Err(unreadable("this is not a PDF (no %PDF- header)"));
    }
    let loaded = catch_unwind(|| lopdf::Document::load_mem(bytes));
    let mut doc = match loaded {
        Ok(Ok(doc)) => doc,
        Ok(Err(e)) => return Err(unreadable(format!("the PDF could not be parsed: {e}"))),
        Err(_) => return Err(unreadable("the PDF could not be parsed: the parser failed")),
    };
    if doc.is_encrypted() {
        // Many PDFs are encrypted with an empty user password only to set
        // permissions; those open without asking anyone.
        let opened = catch_unwind(AssertUnwindSafe(|| doc.decrypt("")));
        if !matches!(opened, Ok(Ok(()))) {
            return Err(Error::new(
                ErrorCode::PdfEncrypted,
                "this PDF needs a password to open: Laika cannot read it",
            ));
        }
    }
    let numbers: Vec<u32> = catch_unwind(AssertUnwindSafe(|| doc.get_pages()))
        .map_err(|_| unreadable("the PDF's page tree could not be read"))?
        .into_keys()
        .collect();
    if numbers.is_empty() {
        return Err(unreadable("the PDF has no pages"));
    }
    if numbers.len() > max_pages {
        return Err(Error::new(
            ErrorCode::PdfTooLarge,
            format!(
                "this PDF has {} pages; Laika reads at most {max_pages}",
                numbers.len()
            ),
        ));
    }
    Ok(numbers.into_iter().map(|n| page(&doc, n)).collect())
}

/// One page's text; a page the parser fails on is an unread page, not a
/// failed document.
fn page(doc: &lopdf::Document, number: u32) -> PageText {
    let run = catch_unwind(AssertUnwindSafe(|| {
        let mut text = String::new();
        let mut out = pdf_extract::PlainTextOutput::new(&mut text);
        pdf_extract::output_doc_page(doc, &mut out, number).map(|()| text)
    }));
    match run {
        Ok(Ok(text)) => PageText { text, read: true },
        Ok(Err(_)) | Err(_) => PageText {
            text: String::new(),
            read: false,
        },
    }
}
