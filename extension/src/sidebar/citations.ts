/**
 * Citations under an answer, and the inline markers ([1]) in its text: each
 * names where its quote is (this page, the selection, or another tab) and
 * highlights it there.
 */
import type { VerifiedCitation } from "../generated/wire.js";
import type { OpenTab } from "../shared/messages.js";
import { h } from "./dom.js";
import { safeHref } from "./render.js";

/** Where the turn's documents came from, to name a citation's source. */
export interface CitationSources {
  others: OpenTab[];
  /** The page the turn read, when known. */
  page?: { title: string; url: string } | null;
  /** The label of each chunk's place ("p. 12", "4:05"; null: none), by chunk index − 1. */
  places?: readonly (string | null)[];
}

export type Highlight = (c: VerifiedCitation, tabId?: number) => void;

/** Text compared as shown: whitespace runs as one space, case ignored. */
const squash = (t: string) => t.replace(/\s+/g, " ").trim().toLowerCase();

/** The other tab a citation's document is (`doc:web:tab:<id>`), if any. */
export function citedTab(c: VerifiedCitation, sources: CitationSources): OpenTab | undefined {
  const m = /^doc:web:tab:(\d+)$/.exec(c.doc_id);
  return m ? sources.others.find((t) => t.id === Number(m[1])) : undefined;
}

/**
 * Whether a citation quotes the page's structured data (its schema.org
 * metadata, quoted as "Structured data (Product): offers.price: 19.99"):
 * not text shown on the page, so there is nothing there to highlight.
 */
export function isStructuredData(c: VerifiedCitation): boolean {
  return /^Structured data( \([^)]*\))?: /.test(c.quote);
}

/** The page a citation's quote is from: a collection's source, another tab, or the page the turn read (null: the selection, or not known). */
export function citedPage(c: VerifiedCitation, sources: CitationSources): { title: string; url: string } | null {
  if (c.source) return { title: c.source.title || c.source.url || c.source.source_id, url: c.source.url ?? "" };
  const tab = citedTab(c, sources);
  if (tab) return { title: tab.title || tab.url, url: tab.url };
  if (c.doc_id === "doc:web:selection") return null;
  return sources.page ?? null;
}

/** Whether the verified quotes come from more than one page: then each names its own. */
export function quotesManyPages(citations: VerifiedCitation[], sources: CitationSources): boolean {
  const pages = new Set(
    citations.filter((c) => c.verified).map((c) => {
      const page = citedPage(c, sources);
      return page ? page.url || page.title : c.doc_id;
    }),
  );
  return pages.size > 1;
}

/** The cited chunk's number and the label of its place (a PDF page, a video time), if it has one. */
export function citedPlace(c: VerifiedCitation, sources: CitationSources): { chunk: number; label: string } | undefined {
  const m = /^doc:web:chunk:(\d+)$/.exec(c.doc_id);
  const chunk = Number(m?.[1] ?? 0);
  const label = chunk ? sources.places?.[chunk - 1] : undefined;
  return label ? { chunk, label } : undefined;
}

/** "on p. 12", "at 4:05". */
function atPlace(label: string): string {
  return label.startsWith("p. ") ? `on ${label}` : `at ${label}`;
}

function sourceName(c: VerifiedCitation, sources: CitationSources): string {
  if (c.doc_id === "doc:web:selection") return "Your selection: ";
  const place = citedPlace(c, sources);
  if (place) return `${place.label}: `;
  const tab = citedTab(c, sources);
  return tab ? `${tab.title || tab.url}: ` : "";
}

/** Where a citation's quote is shown: "on the page", "in your selection", "in the tab “Shop”", "on p. 12", "at 4:05". */
function whereShown(c: VerifiedCitation, tab: OpenTab | undefined, place: string | undefined): string {
  if (tab) return `in the tab “${tab.title || tab.url}”`;
  if (place) return atPlace(place);
  return c.doc_id === "doc:web:selection" ? "in your selection" : "on the page";
}

/**
 * The sources under an answer. A citation whose quote the answer already
 * shows word for word (a summary's quoted points) is shown once: as a
 * numbered button in one "Quoted above" row, its quote only in its title;
 * the others are listed with their quotes. `shown` is the answer's text as
 * displayed.
 */
export function renderCitations(citations: VerifiedCitation[], sources: CitationSources, show: Highlight, shown = ""): HTMLElement | null {
  if (!citations.length) return null;
  const answer = squash(shown);
  const box = h("div", "sources");
  const quoted = h("p", "citations-quoted", "Quoted above: ");
  const list = h("ol", "citations");
  list.setAttribute("aria-label", "Sources");
  citations.forEach((c, i) => {
    const tab = citedTab(c, sources);
    const quote = c.quote.length > 140 ? `${c.quote.slice(0, 140)}…` : c.quote;
    const inAnswer = c.verified && squash(c.quote).length > 0 && answer.includes(squash(c.quote));
    const btn = h("button", c.verified ? "citation" : "citation unverified", inAnswer ? `[${i + 1}]` : `[${i + 1}] ${sourceName(c, sources)}“${quote}”`) as HTMLButtonElement;
    btn.type = "button";
    if (tab) btn.dataset["tab"] = String(tab.id);
    if (c.verified) {
      btn.title = isStructuredData(c) ? `“${quote}” is from the page's structured data, not its visible text` : `Show “${quote}” ${whereShown(c, tab, citedPlace(c, sources)?.label)}`;
      btn.addEventListener("click", () => show(c, tab?.id));
    } else {
      btn.disabled = true;
      btn.title = "Laika could not find this quote in what it read";
    }
    if (inAnswer) {
      btn.setAttribute("aria-label", `Source ${i + 1}: ${btn.title}`);
      quoted.append(btn, " ");
      return;
    }
    const li = h("li");
    li.append(btn);
    if (c.source) li.append(sourceLink(c.source, c.verified ? c.quote : undefined));
    list.append(li);
  });
  if (quoted.querySelector("button")) box.append(quoted);
  if (list.childElementCount) box.append(list);
  return box;
}

function markerButton(doc: Document, n: number, c: VerifiedCitation, sources: CitationSources, show: Highlight): HTMLButtonElement {
  const tab = citedTab(c, sources);
  const b = doc.createElement("button");
  b.type = "button";
  b.className = "cite-marker";
  b.textContent = `[${n}]`;
  const place = citedPlace(c, sources)?.label;
  const where = tab ? `show it in the tab ${tab.title}` : place ? `show it ${atPlace(place)}` : "show it on the page";
  b.setAttribute("aria-label", `Source ${n}: ${isStructuredData(c) ? "from the page's structured data" : where}`);
  b.addEventListener("click", () => show(c, tab?.id));
  return b;
}

/**
 * Inline markers for an answer: "[n]" the model wrote becomes a button for
 * citation n; without any, each verified citation gets a marker after the
 * paragraph, list item or cell that quotes it (nothing when the answer only
 * paraphrases: the list below still has it).
 */
export function placeMarkers(root: HTMLElement, citations: VerifiedCitation[], sources: CitationSources, show: Highlight): void {
  if (/\[\d{1,3}\]/.test(root.textContent ?? "")) {
    linkMarkers(root, citations, sources, show);
    return;
  }
  const blocks = Array.from(root.querySelectorAll("p, li, td, th, blockquote, h2, h3, h4, h5, h6"));
  const many = quotesManyPages(citations, sources);
  citations.forEach((c, i) => {
    const probe = squash(c.quote).slice(0, 60);
    if (!c.verified || probe.length < 3) return;
    // The innermost block holding the quote: later matches in document order are nested deeper.
    const holder = blocks.filter((b) => squash(b.textContent ?? "").includes(probe)).pop();
    if (!holder) return;
    holder.append(" ", markerButton(root.ownerDocument, i + 1, c, sources, show));
    // Quotes from several pages each say which page, linked (opening at the quote).
    const page = many ? citedPage(c, sources) : null;
    if (page) {
      const link = sourceLink({ title: page.title, url: page.url, source_id: "" }, c.quote);
      link.classList.add("quote-source");
      holder.append(link);
    }
  });
}

/**
 * Turns "[n]" in the answer's text into buttons that highlight citation n
 * (only for n that exist and were verified; other brackets stay text).
 */
function linkMarkers(root: HTMLElement, citations: VerifiedCitation[], sources: CitationSources, show: Highlight): void {
  const walker = root.ownerDocument.createTreeWalker(root, 4);
  const texts: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) texts.push(n as Text);
  for (const node of texts) {
    const parts = (node.data ?? "").split(/(\[\d{1,3}\])/);
    if (parts.length === 1) continue;
    const frag = root.ownerDocument.createDocumentFragment();
    for (const part of parts) {
      const n = /^\[(\d{1,3})\]$/.exec(part);
      const c = n ? citations[Number(n[1]) - 1] : undefined;
      if (!c?.verified) {
        if (part) frag.append(part);
        continue;
      }
      const b = markerButton(root.ownerDocument, Number(n?.[1]), c, sources, show);
      frag.append(b);
    }
    node.replaceWith(frag);
  }
}

/** Words of a long quote kept at each end of a text directive's range. */
const RANGE_WORDS = 5;
/** Quotes of more words are matched as a range (start…end): one exact string rarely survives line breaks and markup. */
const LONG_QUOTE_WORDS = 12;

/** One term of a text directive: percent-encoded, with its syntax characters (`-`, `,`, `&`) encoded too. */
function directiveTerm(text: string): string {
  return encodeURIComponent(text).replace(/-/g, "%2D");
}

/**
 * `url` with a text fragment (`#:~:text=`) that makes the browser scroll to
 * and highlight `quote` when it opens the page (Chromium, Safari, Firefox ≥
 * 131; others just open the page). An existing fragment is kept, an
 * existing directive replaced; a long quote becomes a start,end range.
 */
export function textFragmentUrl(url: string, quote: string): string {
  const wordsOf = (t: string) => t.split(/\s+/).filter(Boolean);
  // An elided quote ("a … b") is only on the page as a range from its first part to its last.
  const parts = quote.split(/\u2026|\.{3}/).map(wordsOf).filter((w) => w.length);
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (!first || !last) return url;
  const words = parts.flat();
  const directive =
    parts.length > 1 || words.length > LONG_QUOTE_WORDS
      ? `${directiveTerm(first.slice(0, RANGE_WORDS).join(" "))},${directiveTerm(last.slice(-RANGE_WORDS).join(" "))}`
      : directiveTerm(words.join(" "));
  const hash = url.indexOf("#");
  const base = hash < 0 ? url : url.slice(0, hash);
  const fragment = hash < 0 ? "" : (url.slice(hash + 1).split(":~:")[0] ?? "");
  return `${base}#${fragment}:~:text=${directive}`;
}

/**
 * The source a citation names, linked to its page (opened in a new tab);
 * with the citation's quote, the page opens scrolled to it, highlighted.
 */
export function sourceLink(source: { title: string; url?: string; source_id: string }, quote?: string): HTMLElement {
  const label = ` — ${source.title || source.url || source.source_id}`;
  const safe = source.url ? safeHref(source.url) : null;
  const href = safe && quote ? textFragmentUrl(safe, quote) : safe;
  if (!href) return h("span", undefined, label);
  const a = h("a", undefined, label) as HTMLAnchorElement;
  a.href = href;
  a.target = "_blank";
  a.rel = "noopener noreferrer";
  a.className = "citation-source";
  return a;
}
