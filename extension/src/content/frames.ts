/**
 * Embedded frames (`<iframe>`, `<frame>`) of the observed page.
 *
 * The content script runs in the top frame only. A same-origin frame's
 * document is reachable from there and its text is read with the page's; a
 * frame of another origin (or a sandboxed one) is not, and is only named
 * in the observation (`read: false`) so the answer can say it was not read.
 *
 * Invariants: never throws on a frame (browsers throw `SecurityError` on
 * some cross-origin access); at most `MAX_FRAMES` frames are listed and at
 * most `MAX_FRAME_DEPTH` levels of nested frames are entered.
 */
import type { Frame } from "../generated/wire.js";

export const MAX_FRAMES = 32;
export const MAX_FRAME_DEPTH = 3;
const MAX_FRAME_TITLE = 160;

export function isFrame(el: Element): el is HTMLIFrameElement | HTMLFrameElement {
  const tag = el.tagName.toLowerCase();
  return tag === "iframe" || tag === "frame";
}

/** The frame's document when this script may read it (same origin), else null. */
export function frameDocument(frame: Element): Document | null {
  if (!isFrame(frame)) return null;
  try {
    const doc = frame.contentDocument;
    // Reading a property proves access: some engines hand out a document
    // whose members then throw.
    return doc !== null && doc.documentElement !== null ? doc : null;
  } catch {
    return null;
  }
}

/** A web origin (`https://host:port`), or "" for about:, data:, srcdoc and bad addresses. */
function webOrigin(raw: string, base: string): string {
  try {
    const u = new URL(raw, base);
    return u.protocol === "http:" || u.protocol === "https:" ? u.origin : "";
  } catch {
    return "";
  }
}

function frameTitle(frame: Element, doc: Document | null): string {
  const own = (frame.getAttribute("title") ?? frame.getAttribute("name") ?? "").replace(/\s+/g, " ").trim();
  const title = own || (doc?.title ?? "").replace(/\s+/g, " ").trim();
  return title.slice(0, MAX_FRAME_TITLE);
}

/** Describes one frame: its origin, title and whether its text can be read. */
export function describeFrame(frame: Element, base: string): Frame {
  const doc = frameDocument(frame);
  const origin = doc !== null ? webOrigin(doc.URL, base) : webOrigin(frame.getAttribute("src") ?? "", base);
  return { origin, title: frameTitle(frame, doc), read: doc !== null };
}

/**
 * Every visible frame of `doc` and of the same-origin frames inside it, in
 * document order, bounded. `visible` decides whether a frame is shown.
 */
export function listFrames(doc: Document, base: string, visible: (el: Element) => boolean): Frame[] {
  const out: Frame[] = [];
  const visit = (d: Document, depth: number): void => {
    for (const el of Array.from(d.querySelectorAll("iframe, frame"))) {
      if (out.length >= MAX_FRAMES) return;
      if (!visible(el)) continue;
      out.push(describeFrame(el, d.baseURI || base));
      const inner = frameDocument(el);
      if (inner !== null && depth + 1 < MAX_FRAME_DEPTH) visit(inner, depth + 1);
    }
  };
  visit(doc, 0);
  return out;
}
