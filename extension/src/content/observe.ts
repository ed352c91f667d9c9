/**
 * The observation builder: turns the live DOM into the
 * `web.observation.summary.v1` (+ `web.observation.chunk.v1` for long pages).
 *
 * Invariants:
 * - only the documented fields are produced (docs/llmcp.md#context-documents;
 *   the host refuses unknown fields);
 * - form field values are never read (`.value`, selected options, checked
 *   state): inputs are described by type, name, id, autocomplete, inputmode,
 *   maxlength, form membership and method, label, and where the control sits
 *   (its group's label, the dialog around it, aria-expanded and aria-controls) only;
 * - handles come from the in-memory `HandleRegistry`, never from the DOM;
 * - every list and string is bounded by the `browser.observe_dom` limits.
 */
import type {
  Comment,
  Discussion,
  Item,
  Observation,
  ObservationChunk,
  ObservationSummary,
  ObservedElement,
  OutlineEntry,
  Primary,
} from "../generated/wire.js";
import type { ObserveOptions } from "../shared/messages.js";
import { frameDocument, isFrame, listFrames, MAX_FRAME_DEPTH } from "./frames.js";
import type { HandleRegistry } from "./handles.js";
import { extractPrimary } from "./primary.js";
import { structuredData } from "./structured.js";

export const DEFAULT_LIMITS = {
  maxChars: 8000,
  maxElements: 200,
  maxBlocks: 20000,
  maxPrimaryChars: 4000,
  maxOutline: 60,
  maxOutlineChars: 160,
  maxItems: 40,
  maxItemChars: 240,
  maxComments: 60,
  maxCommentChars: 600,
} as const;

/** Chunking of the text beyond `maxChars` (bounded: at most this many chunks).
 * A long page is read whole (up to about 0.5 MB of text): the host picks
 * the passages that fit the model, so nothing past a fixed prefix is lost. */
export const CHUNK_CHARS = 4000;
export const MAX_CHUNKS = 128;
const MAX_TEXT_SCAN = CHUNK_CHARS * MAX_CHUNKS;
const MAX_ELEMENT_TEXT = 120;

type Limits = { -readonly [K in keyof typeof DEFAULT_LIMITS]: number };

export function resolveLimits(options: ObserveOptions | undefined): Limits {
  const out: Limits = { ...DEFAULT_LIMITS };
  if (!options) return out;
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof Limits)[]) {
    const v = options[key];
    // Clamp: a hostile tool call must not make the observation unbounded.
    if (typeof v === "number" && Number.isFinite(v) && v >= 0) out[key] = Math.min(Math.floor(v), DEFAULT_LIMITS[key] * 8);
  }
  return out;
}

export function normalize(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}

/** Like `normalize`, but keeps one line per block: headings and paragraphs
 * must not run into each other, or a reader (and the ranker) sees one long
 * sentence. */
export function normalizeLines(s: string): string {
  return s
    .split(/\n+/)
    .map(normalize)
    .filter((line) => line !== "")
    .join("\n");
}

export function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  // Cut on a code point boundary.
  const cut = Array.from(s.slice(0, max + 1)).join("").slice(0, max);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

const SKIP_TAGS = new Set([
  "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "head", "meta", "link",
  "video", "audio", "map", "math",
]);

const BLOCK_TAGS = new Set([
  "p", "div", "section", "article", "main", "header", "footer", "aside", "nav", "ul", "ol", "li", "dl", "dt", "dd",
  "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "table", "thead", "tbody", "tfoot", "tr", "figure",
  "figcaption", "form", "fieldset", "legend", "details", "summary", "address", "hr", "caption", "body", "center",
]);

// Visibility answers are cached for one observation: computed style is the
// expensive part, and ancestors are shared by many elements.
let hiddenCache = new WeakMap<Element, boolean>();
let renderedCache = new WeakMap<Element, boolean>();

/** Forgets cached visibility (the page may have changed since the last observation). */
export function resetVisibilityCache(): void {
  hiddenCache = new WeakMap();
  renderedCache = new WeakMap();
}

/** True if the element itself is not rendered (hidden attribute, aria-hidden, CSS). */
export function isHidden(el: Element): boolean {
  const known = hiddenCache.get(el);
  if (known !== undefined) return known;
  let hidden = el.hasAttribute("hidden") || el.getAttribute("aria-hidden") === "true";
  if (!hidden && el.tagName.toLowerCase() === "input" && (el as HTMLInputElement).type === "hidden") hidden = true;
  const view = el.ownerDocument.defaultView;
  if (!hidden && view) {
    const style = view.getComputedStyle(el);
    hidden = style.display === "none" || style.visibility === "hidden";
  }
  hiddenCache.set(el, hidden);
  return hidden;
}

/** True if neither the element nor an ancestor is hidden. */
export function isRendered(el: Element): boolean {
  const known = renderedCache.get(el);
  if (known !== undefined) return known;
  const parent = el.parentElement;
  const rendered = !isHidden(el) && (parent ? isRendered(parent) : true);
  renderedCache.set(el, rendered);
  return rendered;
}

// ---- structured text ----

interface TextState {
  lines: string[];
  chars: number;
  buffer: string;
  blocks: number;
}

function headingLevel(el: Element): number | null {
  const m = /^h([1-6])$/.exec(el.tagName.toLowerCase());
  if (m?.[1]) return Number(m[1]);
  if (el.getAttribute("role") === "heading") {
    const lvl = Number(el.getAttribute("aria-level") ?? "2");
    return Number.isInteger(lvl) && lvl >= 1 && lvl <= 6 ? lvl : 2;
  }
  return null;
}

interface Context {
  prefix: string;
  listDepth: number;
  inPre: boolean;
  /** How many frames deep the walk is (a same-origin frame is read in place). */
  frameDepth: number;
}

/**
 * Walks the DOM and writes one line per block, with the structure
 * prefixes (`H2:`, `- `, `> `, `Code:`, `Caption:`, `Term:`, `Definition:`);
 * `cut` when the page has more than the bounds let it read.
 */
function structuredText(root: Element, maxChars: number, maxBlocks: number): { text: string; cut: boolean } {
  const st: TextState = { lines: [], chars: 0, buffer: "", blocks: 0 };
  const full = () => st.chars >= maxChars || st.blocks >= maxBlocks;
  const flush = (ctx: Context) => {
    const text = ctx.inPre ? st.buffer.replace(/\s+$/g, "") : normalize(st.buffer);
    st.buffer = "";
    if (!text || full()) return;
    const lines = ctx.inPre ? text.split("\n").filter((l) => l.trim()) : [text];
    for (const l of lines) {
      const line = ctx.prefix + (ctx.inPre ? l.trimEnd() : l);
      st.lines.push(line);
      st.chars += line.length + 1;
      st.blocks++;
    }
  };
  const walk = (node: Node, ctx: Context) => {
    if (full()) return;
    if (node.nodeType === 3) {
      st.buffer += node.nodeValue ?? "";
      return;
    }
    if (node.nodeType !== 1) return;
    const el = node as Element;
    const tag = el.tagName.toLowerCase();
    if (isFrame(el)) {
      // A same-origin frame's text reads where the frame sits, as its own
      // blocks, under the same bounds as the rest of the page.
      const inner = ctx.frameDepth < MAX_FRAME_DEPTH && !isHidden(el) ? frameDocument(el) : null;
      if (inner?.body) {
        flush(ctx);
        walk(inner.body, { ...ctx, frameDepth: ctx.frameDepth + 1 });
        flush(ctx);
      }
      return;
    }
    if (SKIP_TAGS.has(tag) || isHidden(el)) return;
    if (tag === "br") {
      if (ctx.inPre) st.buffer += "\n";
      else flush(ctx);
      return;
    }
    if (tag === "input" || tag === "textarea" || tag === "select" || tag === "button") {
      // Controls carry user input or UI labels: never part of the page text.
      return;
    }
    if (tag === "img") {
      const alt = normalize(el.getAttribute("alt") ?? "");
      if (alt) st.buffer += ` ${alt} `;
      return;
    }
    const isBlock = BLOCK_TAGS.has(tag) || headingLevel(el) !== null;
    if (!isBlock) {
      for (const child of Array.from(el.childNodes)) walk(child, ctx);
      if (tag === "td" || tag === "th") st.buffer += " | ";
      return;
    }
    flush(ctx);
    let inner: Context = ctx;
    const level = headingLevel(el);
    if (level !== null) inner = { ...ctx, prefix: `${ctx.prefix}H${level}: ` };
    else if (tag === "li") inner = { ...ctx, prefix: `${"  ".repeat(Math.max(0, ctx.listDepth - 1))}- ` };
    else if (tag === "ul" || tag === "ol") inner = { ...ctx, listDepth: ctx.listDepth + 1 };
    else if (tag === "blockquote") inner = { ...ctx, prefix: `> ${ctx.prefix}` };
    else if (tag === "pre") inner = { ...ctx, prefix: "Code: ", inPre: true };
    else if (tag === "figcaption" || tag === "caption") inner = { ...ctx, prefix: "Caption: " };
    else if (tag === "dt") inner = { ...ctx, prefix: "Term: " };
    else if (tag === "dd") inner = { ...ctx, prefix: "Definition: " };
    for (const child of Array.from(el.childNodes)) walk(child, inner);
    if (tag === "tr") st.buffer = st.buffer.replace(/\s*\|\s*$/, "");
    flush(inner);
  };
  const top: Context = { prefix: "", listDepth: 0, inPre: false, frameDepth: 0 };
  walk(root, top);
  flush(top);
  // Lines inside a list item that were nested blocks keep the item prefix only once.
  return { text: st.lines.join("\n"), cut: full() };
}

// ---- elements ----

const INTERACTIVE =
  "a[href], button, input, select, textarea, summary, [contenteditable=''], [contenteditable=true], " +
  "[role=button], [role=link], [role=checkbox], [role=radio], [role=tab], [role=menuitem], [role=option], " +
  "[role=switch], [role=textbox], [role=combobox], [role=searchbox], [role=slider], [role=menuitemcheckbox], " +
  "[role=menuitemradio]";

const MAX_CONTEXT_TEXT = 300;
const DIALOG = "dialog, [role=dialog], [role=alertdialog], [aria-modal=true]";
const GROUP = "[role=group], [role=radiogroup], [role=tablist], [role=toolbar], [role=navigation], nav";

/** The accessible name of a container: aria-label, else the elements aria-labelledby names. */
function containerName(el: Element): string {
  const aria = normalize(el.getAttribute("aria-label") ?? "");
  if (aria) return aria;
  const ids = el.getAttribute("aria-labelledby");
  if (!ids) return "";
  return normalize(
    ids
      .split(/\s+/)
      .map((id) => el.ownerDocument.getElementById(id))
      .filter((x): x is HTMLElement => x !== null)
      .map(textOf)
      .join(" "),
  );
}

/** An element's text with a space at every node boundary ("undone.</p><button>OK" stays two words), up to `max` characters. */
function spacedText(el: Element, max: number): string {
  const walker = el.ownerDocument.createTreeWalker(el, 4 /* NodeFilter.SHOW_TEXT */);
  const parts: string[] = [];
  let length = 0;
  for (let node = walker.nextNode(); node && length < max; node = walker.nextNode()) {
    const t = node.nodeValue ?? "";
    parts.push(t);
    length += t.length + 1;
  }
  return normalize(parts.join(" "));
}

/**
 * Where a control sits, for the gate's judgement of a click: the label of
 * its group (a fieldset legend, a named group, tab list, toolbar or
 * navigation), and the text of the dialog around it.
 */
function describeContext(el: Element, out: ObservedElement): void {
  const legend = el.closest("fieldset")?.querySelector(":scope > legend");
  const groupEl = el.closest(GROUP);
  const group = legend ? textOf(legend) : groupEl ? containerName(groupEl) : "";
  if (group) out.group = clip(group, MAX_ELEMENT_TEXT);
  const dialog = el.closest(DIALOG);
  if (dialog) {
    // The dialog's name and its text: "Delete this repository?" makes its "OK" a commit.
    const text = normalize(`${containerName(dialog)} ${spacedText(dialog, MAX_CONTEXT_TEXT)}`);
    if (text) out.dialog = clip(text, MAX_CONTEXT_TEXT);
  }
  const expanded = el.getAttribute("aria-expanded");
  if (expanded === "true" || expanded === "false") out.expanded = expanded === "true";
  const controls = el.getAttribute("aria-controls");
  if (controls !== null) {
    const ids = controls.split(/\s+/).filter((id) => id);
    out.controls = ids.length > 0 && ids.every((id) => el.ownerDocument.getElementById(id) !== null);
  }
}

function implicitRole(el: Element): string {
  const explicit = el.getAttribute("role");
  if (explicit) return normalize(explicit).split(" ")[0] ?? "";
  const tag = el.tagName.toLowerCase();
  switch (tag) {
    case "a":
      return "link";
    case "button":
    case "summary":
      return "button";
    case "select":
      return (el as HTMLSelectElement).multiple ? "listbox" : "combobox";
    case "textarea":
      return "textbox";
    case "input": {
      const t = (el as HTMLInputElement).type.toLowerCase();
      if (t === "checkbox" || t === "radio") return t;
      if (t === "submit" || t === "button" || t === "reset" || t === "image") return "button";
      if (t === "range") return "slider";
      if (t === "search") return "searchbox";
      return "textbox";
    }
    default:
      return el.hasAttribute("contenteditable") ? "textbox" : "generic";
  }
}

function textOf(el: Element): string {
  return normalize(el.textContent ?? "");
}

/**
 * The label of a form control: every distinct one of aria-label,
 * aria-labelledby, <label for> / wrapping <label>, placeholder and title,
 * joined, so the host's gate sees a field's meaning even when one source
 * is a decoy ("Field 1" as aria-label, "Card number" as label).
 */
function controlLabel(el: Element): string {
  const parts: string[] = [normalize(el.getAttribute("aria-label") ?? "")];
  const labelledBy = el.getAttribute("aria-labelledby");
  if (labelledBy) {
    parts.push(
      normalize(
        labelledBy
          .split(/\s+/)
          .map((id) => el.ownerDocument.getElementById(id))
          .filter((x): x is HTMLElement => x !== null)
          .map(textOf)
          .join(" "),
      ),
    );
  }
  const labels = (el as HTMLInputElement).labels;
  if (labels && labels.length > 0) parts.push(normalize(Array.from(labels).map(textOf).join(" ")));
  parts.push(normalize(el.getAttribute("placeholder") ?? ""), normalize(el.getAttribute("title") ?? ""));
  return [...new Set(parts.filter((p) => p))].join(" · ");
}

/** A key per form ("form-1", "form-2"…), the same for a form in every observation of the page. */
const formKeys = new WeakMap<HTMLFormElement, string>();
let formCount = 0;
function formKey(form: HTMLFormElement | null): string | undefined {
  if (!form) return undefined;
  let key = formKeys.get(form);
  if (!key) {
    formCount += 1;
    key = `form-${formCount}`;
    formKeys.set(form, key);
  }
  return key;
}

/** The scheme of an href the observation does not carry whole (`javascript:`), so the gate still sees it. */
function hrefScheme(raw: string | null, base: string): string | undefined {
  if (!raw) return undefined;
  try {
    return new URL(raw, base).protocol;
  } catch {
    return undefined;
  }
}

/** Visible name of a clickable element; never a form value except button captions. */
function accessibleName(el: Element): string {
  const tag = el.tagName.toLowerCase();
  const aria = normalize(el.getAttribute("aria-label") ?? "");
  if (aria) return aria;
  if (tag === "input") {
    const t = (el as HTMLInputElement).type.toLowerCase();
    // A submit button's value is its caption, not user input.
    if (t === "submit" || t === "button" || t === "reset") return normalize(el.getAttribute("value") ?? t);
    if (t === "image") return normalize(el.getAttribute("alt") ?? "");
    return "";
  }
  if (tag === "textarea" || tag === "select" || el.hasAttribute("contenteditable")) return "";
  const text = textOf(el);
  if (text) return text;
  const img = el.querySelector("img[alt]");
  return normalize(img?.getAttribute("alt") ?? el.getAttribute("title") ?? "");
}

/** An absolute http(s)/mailto URL, or undefined (javascript: and friends are dropped). */
export function safeUrl(raw: string | null, base: string): string | undefined {
  if (!raw) return undefined;
  try {
    const u = new URL(raw, base);
    if (u.protocol !== "http:" && u.protocol !== "https:" && u.protocol !== "mailto:") return undefined;
    u.username = "";
    u.password = "";
    return u.href;
  } catch {
    return undefined;
  }
}

/** An element's `role` exactly as observations report it. */
export function elementRole(el: Element): string {
  return implicitRole(el);
}

/** An element's `text` exactly as observations report it (clipped accessible name). */
export function elementText(el: Element): string {
  return clip(accessibleName(el), MAX_ELEMENT_TEXT);
}

/** An element exactly as observations describe it. */
export function describeElement(el: Element, handle: string, base: string): ObservedElement {
  const tag = el.tagName.toLowerCase();
  const out: ObservedElement = {
    handle_id: handle,
    role: elementRole(el),
    text: elementText(el),
    tag,
  };
  if (tag === "a") {
    const raw = el.getAttribute("href");
    const href = safeUrl(raw, base) ?? hrefScheme(raw, base);
    if (href) out.href = href;
  }
  const id = normalize(el.getAttribute("id") ?? "");
  if (id) out.id = clip(id, 64);
  if (tag === "input" || tag === "textarea" || tag === "select" || tag === "button") {
    const control = el as HTMLInputElement | HTMLButtonElement;
    if (tag === "input" || tag === "button") out.input_type = (control.type || "text").toLowerCase();
    const form = formKey(control.form);
    if (form) out.form = form;
    // Only a method the page wrote: a form without one is usually sent by script.
    const method = normalize(control.form?.getAttribute("method") ?? "").toLowerCase();
    if (form && (method === "get" || method === "post" || method === "dialog")) out.form_method = method;
  }
  describeContext(el, out);
  if (tag === "input" || tag === "textarea" || tag === "select") {
    const ac = normalize(el.getAttribute("autocomplete") ?? "");
    if (ac) out.autocomplete = clip(ac, 64);
    const name = normalize(el.getAttribute("name") ?? "");
    if (name) out.name = clip(name, 64);
    const label = controlLabel(el);
    if (label) out.label = clip(label, MAX_ELEMENT_TEXT);
    const mode = normalize(el.getAttribute("inputmode") ?? "");
    if (mode) out.input_mode = clip(mode, 32);
    const max = (el as HTMLInputElement).maxLength;
    if (typeof max === "number" && max >= 0) out.max_length = max;
  }
  return out;
}

// ---- outline ----

function outline(root: Element, limits: Limits): OutlineEntry[] {
  const out: OutlineEntry[] = [];
  for (const el of Array.from(root.querySelectorAll("h1, h2, h3, h4, h5, h6, [role=heading]"))) {
    if (out.length >= limits.maxOutline) break;
    const level = headingLevel(el);
    const text = clip(textOf(el), limits.maxOutlineChars);
    if (level === null || !text || isHidden(el)) continue;
    out.push({ level, tag: el.tagName.toLowerCase(), role: el.getAttribute("role") ?? "", text });
  }
  return out;
}

// ---- items (listing pages) ----

const COUNT_RE = /(\d[\d,.]*)\s*(k)?\s*(?:comments?|replies|responses|answers)\b/i;

export function parseCount(text: string): number | undefined {
  const m = COUNT_RE.exec(text);
  if (!m?.[1]) return undefined;
  const n = Number(m[1].replace(/,/g, ""));
  if (!Number.isFinite(n)) return undefined;
  return Math.round(m[2] ? n * 1000 : n);
}

function inChrome(el: Element): boolean {
  return el.closest("nav, header, footer, [role=navigation], [role=banner], [role=contentinfo]") !== null;
}

function items(doc: Document, registry: HandleRegistry, limits: Limits, base: string): Item[] {
  const out: Item[] = [];
  const seen = new Set<Element>();
  const containers = Array.from(doc.querySelectorAll("article, li, tr, [role=article], [role=listitem]"));
  for (const c of containers) {
    if (out.length >= limits.maxItems) break;
    if (inChrome(c) || isHidden(c) || c.closest("[class*=comment i]")) continue;
    // Title link: inside a heading if there is one, else the first long-enough link.
    const link =
      c.querySelector("h1 a[href], h2 a[href], h3 a[href], h4 a[href]") ??
      Array.from(c.querySelectorAll("a[href]")).find((a) => textOf(a).length >= 12 && parseCount(textOf(a)) === undefined);
    if (!link || seen.has(link)) continue;
    const title = clip(textOf(link), limits.maxItemChars);
    const url = safeUrl(link.getAttribute("href"), base);
    if (!title || !url) continue;
    seen.add(link);
    const item: Item = { title, url, handle_id: registry.handleFor(link) };
    // A listing row's metadata may live in the next sibling row (tables of links).
    let ctext = textOf(c);
    const next = c.tagName.toLowerCase() === "tr" ? c.nextElementSibling : null;
    if (next && next.querySelector("a[href]") && !next.querySelector("h1, h2, h3, h4")) ctext += ` ${textOf(next)}`;
    const count = parseCount(ctext);
    if (count !== undefined) item.comment_count = count;
    const snippet = clip(normalize(ctext.replace(textOf(link), " ")), limits.maxItemChars);
    if (snippet) item.snippet = snippet;
    out.push(item);
  }
  // One or two link blocks are not a listing.
  return out.length >= 3 ? out : [];
}

function topDiscussions(list: Item[]): Discussion[] {
  return list
    .filter((i) => (i.comment_count ?? 0) > 0)
    .sort((a, b) => (b.comment_count ?? 0) - (a.comment_count ?? 0))
    .slice(0, 5)
    .map((i) => {
      const d: Discussion = { title: i.title };
      if (i.url) d.url = i.url;
      if (i.comment_count !== undefined) d.comment_count = i.comment_count;
      return d;
    });
}

// ---- comments ----

const COMMENT_SEL =
  "[role=comment], [itemtype*='schema.org/Comment' i], [class~=comment], [class*='comment-' i], [class*='-comment' i], [id^='comment-' i], [class~=athing][class~=comtr]";
const AUTHOR_SEL = "[rel=author], [itemprop=author], [class*=author i], [class*=user i], [class*=byline i]";
const AGE_SEL = "time, [class*=age i], [class*=date i], [class*=time i]";
const SCORE_SEL = "[class*=score i], [class*=vote i], [class*=point i], [class*=karma i], [itemprop=upvoteCount]";
const BODY_SEL = "[class*=body i], [class*=text i], [class*=content i], [itemprop=text], p";

function isCommentContainer(el: Element): boolean {
  const cls = (el.getAttribute("class") ?? "").toLowerCase();
  // Skip comment forms, counts and link-only bits ("comment-count", "comment-form").
  if (/comment-?(form|count|link|button|reply|meta|author|body|text|content|header|footer|actions)/.test(cls)) return false;
  return el.tagName.toLowerCase() !== "a" && el.tagName.toLowerCase() !== "form";
}

function ownText(el: Element, nested: Element[], metas: Element[]): string {
  const clone = el.cloneNode(true) as Element;
  // Remove nested comments and meta blocks from the clone to keep only this comment's words.
  const drop = new Set<Element>([...nested, ...metas]);
  const originals = Array.from(el.querySelectorAll("*"));
  const copies = Array.from(clone.querySelectorAll("*"));
  originals.forEach((o, i) => {
    if (drop.has(o)) copies[i]?.remove();
  });
  for (const ctl of Array.from(clone.querySelectorAll("button, input, textarea, select, script, style"))) ctl.remove();
  return textOf(clone);
}

function comments(doc: Document, registry: HandleRegistry, limits: Limits): Comment[] {
  const all = Array.from(doc.querySelectorAll(COMMENT_SEL)).filter((el) => isCommentContainer(el) && !isHidden(el));
  const set = new Set(all);
  const out: Comment[] = [];
  for (const el of all) {
    if (out.length >= limits.maxComments) break;
    let depth = 1;
    for (let p = el.parentElement; p; p = p.parentElement) if (set.has(p)) depth++;
    const explicit = Number(el.getAttribute("data-depth") ?? el.getAttribute("aria-level") ?? NaN);
    if (Number.isInteger(explicit) && explicit >= 0 && explicit < 100) depth = explicit + (el.hasAttribute("aria-level") ? 0 : 1);
    const nested = all.filter((o) => o !== el && el.contains(o));
    const own = (sel: string) =>
      Array.from(el.querySelectorAll(sel)).find((m) => !nested.some((n) => n.contains(m)));
    const authorEl = own(AUTHOR_SEL);
    const ageEl = own(AGE_SEL);
    const scoreEl = own(SCORE_SEL);
    const bodyEl = own(BODY_SEL);
    const metas = [authorEl, ageEl, scoreEl].filter((x): x is Element => x !== undefined);
    const text = clip(bodyEl && !metas.includes(bodyEl) ? ownText(bodyEl, nested, []) : ownText(el, nested, metas), limits.maxCommentChars);
    if (text.length < 2) continue;
    const c: Comment = { text, depth, handle_id: registry.handleFor(el) };
    const author = clip(authorEl ? textOf(authorEl) : "", 80);
    if (author) c.author = author;
    const age = clip(ageEl ? textOf(ageEl) || (ageEl.getAttribute("datetime") ?? "") : "", 80);
    if (age) c.age = age;
    const score = clip(scoreEl ? textOf(scoreEl) : "", 40);
    if (score) c.score = score;
    out.push(c);
  }
  return out;
}

// ---- signals ----

function visibleMatch(doc: Document, sel: string): boolean {
  return Array.from(doc.querySelectorAll(sel)).some((el) => !isHidden(el));
}

export function detectSignals(doc: Document, bodyText: string, base: string): string[] {
  const signals: string[] = [];
  const lower = bodyText.toLowerCase();
  const add = (s: string) => {
    if (!signals.includes(s)) signals.push(s);
  };
  const ldjson = Array.from(doc.querySelectorAll("script[type='application/ld+json']"))
    .map((s) => s.textContent ?? "")
    .join(" ");
  if (
    visibleMatch(doc, "[class*=paywall i], [id*=paywall i], [class*=subscriber-only i], [class*=premium-wall i]") ||
    /"isAccessibleForFree"\s*:\s*"?false/i.test(ldjson) ||
    /subscribe (now )?to (continue|keep) reading|this (article|content) is for subscribers/.test(lower)
  )
    add("paywall");
  if (
    /(sign|log) ?in to (continue|view|read|see)|you must (be )?(signed|logged) in|please (sign|log) ?in\b/.test(lower) ||
    (visibleMatch(doc, "input[type=password]") && bodyText.length < 1500)
  )
    add("login_required");
  if (
    visibleMatch(doc, "[id*=cookie i], [class*=cookie i], [id*=consent i], [class*=consent i], [class*=gdpr i], [id*=gdpr i]") ||
    /accept (all )?cookies|we use cookies/.test(lower)
  )
    add("consent_banner");
  if (visibleMatch(doc, "dialog[open], [role=dialog], [role=alertdialog], [aria-modal=true]")) add("overlay_or_dialog");
  if (
    visibleMatch(doc, ".g-recaptcha, .h-captcha, .cf-turnstile, [class*=captcha i], [id*=captcha i]") ||
    Array.from(doc.querySelectorAll("iframe[src]")).some((f) =>
      /recaptcha|hcaptcha|turnstile|challenges\.cloudflare/i.test(f.getAttribute("src") ?? ""),
    ) ||
    /verify (that )?you are (a )?human|are you a robot/.test(lower)
  )
    add("captcha");
  if (
    visibleMatch(doc, "[class*=age-gate i], [id*=age-gate i], [class*=agegate i], [class*=age-verif i]") ||
    /(are you|confirm (that )?you are) (over |at least )?(18|21)|age verification|enter your (date of )?birth/.test(lower)
  )
    add("age_gate");
  if (
    doc.contentType === "application/pdf" ||
    visibleMatch(doc, "embed[type='application/pdf'], object[type='application/pdf'], pdf-viewer")
  )
    add("pdf_viewer");
  if (
    visibleMatch(doc, "[class*=infinite i], [data-infinite-scroll], [role=feed]") ||
    doc.querySelector("[aria-busy=true][role=feed]") !== null
  )
    add("infinite_scroll");
  const origin = (() => {
    try {
      return new URL(base).origin;
    } catch {
      return "";
    }
  })();
  for (const f of Array.from(doc.querySelectorAll("iframe[src]"))) {
    try {
      const u = new URL(f.getAttribute("src") ?? "", base);
      if ((u.protocol === "http:" || u.protocol === "https:") && u.origin !== origin && !isHidden(f)) {
        add("cross_origin_iframe");
        break;
      }
    } catch {
      // An unparsable src is not an iframe we can reason about.
    }
  }
  if (normalize(bodyText).length < 200) add("sparse_text");
  return signals;
}

// ---- the observation ----

function primaryOf(doc: Document, registry: HandleRegistry, limits: Limits): Primary | undefined {
  const { element, text } = extractPrimary(doc);
  const t = clip(normalizeLines(text), limits.maxPrimaryChars);
  if (!t) return undefined;
  const p: Primary = { text: t };
  if (element) {
    const tag = element.tagName.toLowerCase();
    p.tag = tag;
    p.role = element.getAttribute("role") ?? (tag === "main" ? "main" : tag === "article" ? "article" : "");
    p.handle_id = registry.handleFor(element);
  }
  return p;
}

/** Splits text into chunks on line boundaries (a line longer than a chunk is cut). */
export function chunkText(text: string, size: number, max: number): string[] {
  const chunks: string[] = [];
  let cur = "";
  for (const line of text.split("\n")) {
    let rest = line;
    while (rest.length > size) {
      if (cur) chunks.push(cur);
      cur = "";
      chunks.push(clip(rest, size));
      rest = rest.slice(clip(rest, size).length);
    }
    if (cur.length + rest.length + 1 > size && cur) {
      chunks.push(cur);
      cur = "";
    }
    cur = cur ? `${cur}\n${rest}` : rest;
  }
  if (cur.trim()) chunks.push(cur);
  return chunks.filter((c) => c.trim()).slice(0, max);
}

export function buildObservation(doc: Document, registry: HandleRegistry, options?: ObserveOptions): Observation {
  const limits = resolveLimits(options);
  resetVisibilityCache();
  const url = doc.location?.href || doc.URL || "about:blank";
  const base = doc.baseURI || url;
  const title = clip(normalize(doc.title), 300);
  let root: Element | null = doc.body ?? doc.documentElement;
  if (typeof options?.rootHandleId === "string" && options.rootHandleId) root = registry.resolve(options.rootHandleId) ?? root;
  if (!root) return { summary: { doc_type: "web.observation.summary.v1", url, title, text: "" } };

  const { text: fullText, cut } = structuredText(root, limits.maxChars + MAX_TEXT_SCAN, limits.maxBlocks);
  let text = fullText;
  let rest = "";
  if (fullText.length > limits.maxChars) {
    const head = clip(fullText, limits.maxChars);
    const cut = head.lastIndexOf("\n");
    text = cut > limits.maxChars / 2 ? head.slice(0, cut) : head;
    rest = fullText.slice(text.length).replace(/^\n/, "");
  }

  const summary: ObservationSummary = { doc_type: "web.observation.summary.v1", url, title, text };
  const lang = clip(normalize(doc.documentElement?.getAttribute("lang") ?? ""), 35);
  if (lang) summary.lang = lang;
  const primary = primaryOf(doc, registry, limits);
  if (primary) summary.primary = primary;
  const its = items(doc, registry, limits, base);
  if (its.length) summary.items = its;
  const cs = comments(doc, registry, limits);
  if (cs.length) summary.comments = cs;
  const ol = outline(root, limits);
  if (ol.length) summary.outline = ol;
  const signals = detectSignals(doc, fullText, url);
  const parts = rest.trim() ? chunkText(rest, CHUNK_CHARS, MAX_CHUNKS + 1) : [];
  // The page goes on beyond what was read: a runtime that reads all of it says how much it read.
  if (cut || parts.length > MAX_CHUNKS) signals.push("text_truncated");
  if (signals.length) summary.signals = signals;
  const elements: ObservedElement[] = [];
  for (const el of Array.from(root.querySelectorAll(INTERACTIVE))) {
    if (elements.length >= limits.maxElements) break;
    if (!isRendered(el)) continue;
    elements.push(describeElement(el, registry.handleFor(el), base));
  }
  if (elements.length) summary.elements = elements;
  const frames = listFrames(doc, base, isRendered);
  if (frames.length) summary.frames = frames;
  const discussions = topDiscussions(its);
  if (discussions.length) summary.top_discussions = discussions;
  const structured = structuredData(doc);
  if (structured.length) summary.structured = structured;

  const obs: Observation = { summary };
  const kept = parts.slice(0, MAX_CHUNKS);
  if (kept.length) {
    obs.chunks = kept.map(
      (t, i): ObservationChunk => ({
        doc_type: "web.observation.chunk.v1",
        url,
        title,
        chunk_index: i + 1,
        chunk_count: kept.length,
        text: t,
      }),
    );
  }
  return obs;
}
