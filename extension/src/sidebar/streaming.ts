/**
 * What the sidebar shows while the host is still reading: a context meter
 * saying how much of the page went to the model (`context_usage`). The
 * words of the block being written (`text_delta`) are kept by the state
 * (`state.ts`) and drawn by the turn view.
 *
 * Everything is text through `textContent`; nothing from the host or the
 * page is parsed as HTML.
 */
import type { ContextUsageMessage } from "../generated/wire.js";

/**
 * Where the reading of the page stands: not started while the user chooses
 * on its estimate, under way, over with an answer, or over without one
 * (stopped, not chosen, failed).
 */
export type Reading = "asking" | "reading" | "read" | "unread";

/**
 * "read 34 % of this page: the parts about bridge, cost", "Read the whole
 * page in 12 parts, then summarized them." for a page summarized in stages,
 * "Read only the start of this page (8 %)." for one sent from its start
 * until the budget was full, or null when all of it was sent. A page read in stages is said to be read
 * only once it was: while the user chooses on its estimate nothing is said,
 * while the parts are read the note says so, and a turn that ended without
 * its answer says the page was not read.
 */
export function readingNote(msg: ContextUsageMessage, reading: Reading = "read"): string | null {
  const s = msg.selection;
  if (!s) return startNote(msg);
  if (s.page_chars <= 0) return null;
  if (s.strategy === "staged") {
    const parts = s.passages_total === 1 ? "1 part" : `${s.passages_total.toLocaleString()} parts`;
    switch (reading) {
      case "asking":
        return null;
      case "read":
        return `Read the whole page in ${parts}, then summarized them.`;
      case "reading":
        return `Reading the whole page in ${parts}, then summarizing them…`;
      case "unread":
        return `The whole page (${parts}) was not read.`;
    }
  }
  const percent = Math.max(1, Math.min(99, Math.round((100 * s.sent_chars) / s.page_chars)));
  const about = s.about.length ? `: the parts about ${s.about.join(", ")}` : "";
  return `Read ${percent} % of this page${about}.`;
}

/** The page's own documents (its summary and its chunks), as the host names them. */
const PAGE_DOC = /^doc:web:(summary|chunk:\d+)$/;

/**
 * "Read only the start of this page (8 %)." when the page was sent from its
 * start until the budget was full (no passages chosen), or null when all of
 * it was sent.
 */
function startNote(msg: ContextUsageMessage): string | null {
  const sent = msg.documents.filter((d) => d.included && PAGE_DOC.test(d.doc_id)).reduce((n, d) => n + d.chars, 0);
  const left = msg.cut.filter((c) => PAGE_DOC.test(c.doc_id)).reduce((n, c) => n + c.chars_removed, 0);
  if (left <= 0 || sent <= 0) return null;
  const percent = Math.max(1, Math.min(99, Math.round((100 * sent) / (sent + left))));
  return `Read only the start of this page (${percent} %).`;
}

/**
 * A meter of the model's context: how full the request is, and, when the
 * page did not fit, which part of it was read. Without a model (`model`
 * false: the offline runtime) there is no context to fill: only the note
 * is shown, and nothing when there is none.
 */
export function contextMeter(doc: Document, msg: ContextUsageMessage, model = true, reading: Reading = "read"): HTMLElement | null {
  const box = doc.createElement("div");
  box.className = "context-meter";
  if (model) box.append(meterOf(doc, msg));
  const note = readingNote(msg, reading);
  const conversation = msg.documents.find((d) => d.doc_id === "conversation");
  const parts = [note, conversation ? "Earlier turns of this conversation were included." : null].filter((p): p is string => p !== null);
  if (parts.length) {
    const p = doc.createElement("span");
    p.className = "context-note";
    p.textContent = parts.join(" ");
    box.append(p);
  }
  return box.childElementCount ? box : null;
}

function meterOf(doc: Document, msg: ContextUsageMessage): HTMLMeterElement {
  const meter = doc.createElement("meter");
  const budget = Math.max(1, Math.min(msg.budget.max_chars, msg.budget.max_tokens * 4));
  meter.min = 0;
  meter.max = budget;
  meter.value = Math.min(msg.used.chars, budget);
  const share = Math.round((100 * Math.min(msg.used.chars, budget)) / budget);
  meter.title = `Context used: ${share} % (~${msg.used.tokens.toLocaleString()} tokens)`;
  return meter;
}
