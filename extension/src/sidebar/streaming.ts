/**
 * What the sidebar shows while the host is still working on an answer:
 * the words of the block being written (`text_delta`), and a context meter
 * saying how much of the page went to the model (`context_usage`).
 *
 * Everything is text through `textContent`; nothing from the host or the
 * page is parsed as HTML.
 */
import type { ContextUsageMessage, TextDeltaMessage } from "../generated/wire.js";

/** The block in progress of one answer area. */
interface Writing {
  step: number;
  index: number;
  text: string;
}

const writing = new WeakMap<HTMLElement, Writing>();

/**
 * Appends a `text_delta` to the provisional text at the end of `body`. The
 * text of one block is kept here, so it survives the answer area being
 * redrawn (a `render_delta` of an earlier block) and is shown again whole.
 * A block's own `render_delta` (or `render_reset`, or the `assistant`)
 * redraws `body` without it.
 */
export function showText(body: HTMLElement, msg: TextDeltaMessage): void {
  const prev = writing.get(body);
  const same = prev && prev.step === msg.step && prev.index === msg.index;
  const state: Writing = same ? prev : { step: msg.step, index: msg.index, text: "" };
  state.text += msg.text;
  writing.set(body, state);
  // Checked by class, not `instanceof`: the element may come from another realm.
  let el = body.lastElementChild;
  if (!el?.classList.contains("streaming-text")) {
    el = body.ownerDocument.createElement("p");
    el.className = "streaming-text";
    body.append(el);
  }
  el.setAttribute("data-index", String(msg.index));
  el.textContent = state.text;
}

/** Forgets the block in progress (a new attempt or step starts over). */
export function forgetText(body: HTMLElement): void {
  writing.delete(body);
  for (const el of Array.from(body.querySelectorAll(".streaming-text"))) el.remove();
}

/**
 * "read 34 % of this page: the parts about bridge, cost", "Read the whole
 * page in 12 parts, then summarized them." for a page summarized in stages,
 * or null when all of it was sent.
 */
export function readingNote(msg: ContextUsageMessage): string | null {
  const s = msg.selection;
  if (!s || s.page_chars <= 0) return null;
  if (s.strategy === "staged") {
    const parts = s.passages_total === 1 ? "1 part" : `${s.passages_total.toLocaleString()} parts`;
    return `Read the whole page in ${parts}, then summarized them.`;
  }
  const percent = Math.max(1, Math.min(99, Math.round((100 * s.sent_chars) / s.page_chars)));
  const about = s.about.length ? `: the parts about ${s.about.join(", ")}` : "";
  return `Read ${percent} % of this page${about}.`;
}

/**
 * A meter of the model's context: how full the request is, and, when the
 * page did not fit, which part of it was read.
 */
export function contextMeter(doc: Document, msg: ContextUsageMessage): HTMLElement {
  const box = doc.createElement("div");
  box.className = "context-meter";
  const meter = doc.createElement("meter");
  const budget = Math.max(1, Math.min(msg.budget.max_chars, msg.budget.max_tokens * 4));
  meter.min = 0;
  meter.max = budget;
  meter.value = Math.min(msg.used.chars, budget);
  const share = Math.round((100 * Math.min(msg.used.chars, budget)) / budget);
  meter.title = `Context used: ${share} % (~${msg.used.tokens.toLocaleString()} tokens)`;
  box.append(meter);
  const note = readingNote(msg);
  const conversation = msg.documents.find((d) => d.doc_id === "conversation");
  const parts = [
    note,
    conversation ? "Earlier turns of this conversation were included." : null,
  ].filter((p): p is string => p !== null);
  if (parts.length) {
    const p = doc.createElement("span");
    p.className = "context-note";
    p.textContent = parts.join(" ");
    box.append(p);
  }
  return box;
}
