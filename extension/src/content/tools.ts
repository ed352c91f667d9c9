/**
 * Page-side tool execution: observe, click, type, select, scroll, selection
 * links and citation highlighting. Handles resolve only through the registry
 * of the observed document; anything else is refused. Which tools run here
 * comes from the host's tool registry (src/generated/tools.ts): the handler
 * table is keyed by its `PageTool` union, so a new page tool fails the build
 * until it has a handler.
 */
import { isPageTool, type PageTool, type UntrustedArguments } from "../generated/tools.js";
import type { Observation, ToolTarget } from "../generated/wire.js";
import type { HandleRegistry } from "./handles.js";
import { buildObservation, clip, isRendered, normalize, safeUrl } from "./observe.js";
import { quoteRange } from "./quote-range.js";
import { STALE_HANDLE, targetMismatch } from "./target.js";

export type ToolOutcome =
  | { ok: true; message: string; data?: Record<string, unknown>; observation?: Observation }
  | { ok: false; error: string; code?: string };

type Failure = Extract<ToolOutcome, { ok: false }>;

function fail(code: string, error: string): Failure {
  return { ok: false, code, error };
}

const MAX_TYPE_CHARS = 10_000;
const MAX_SCROLL = 100_000;

function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

function describe(el: Element): string {
  const name = normalize(el.getAttribute("aria-label") ?? el.textContent ?? "") || el.tagName.toLowerCase();
  return `"${clip(name, 60)}"`;
}

/**
 * The element a call acts on: its handle must resolve in this document and,
 * when the host named the gated `expected` target, still have that role and
 * text (else STALE_HANDLE, and nothing is done).
 */
function target(registry: HandleRegistry, handleId: unknown, expected: ToolTarget | null): Element | Failure {
  const handle = str(handleId);
  if (!handle) return fail("INVALID_ARGUMENTS", "handleId is missing");
  if (expected && expected.handle_id !== handle) {
    return fail(STALE_HANDLE, `the call names ${handle} but was approved for ${expected.handle_id}; nothing was done`);
  }
  const el = registry.resolve(handle);
  if (!el) return fail(STALE_HANDLE, `element ${handle} is no longer on this page (observe again); nothing was done`);
  if (expected) {
    const why = targetMismatch(el, expected);
    if (why) return fail(STALE_HANDLE, why);
  }
  return el;
}

const isFailure = (v: Element | Failure): v is Failure => !("tagName" in v);

/** Sets a form control's value the way a user edit would, so page frameworks notice. */
function setNativeValue(el: HTMLInputElement | HTMLTextAreaElement, value: string): void {
  const proto = Object.getPrototypeOf(el) as object;
  const setter = Object.getOwnPropertyDescriptor(proto, "value")?.set;
  if (setter) setter.call(el, value);
  else el.value = value;
}

/** What a page tool acts on. */
interface PageContext {
  doc: Document;
  registry: HandleRegistry;
  /** The gated element of a handle call (null when the call names none). */
  expected: ToolTarget | null;
}

type PageHandler<N extends PageTool> = (args: UntrustedArguments<N>, ctx: PageContext) => ToolOutcome;

const PAGE_HANDLERS: { [N in PageTool]: PageHandler<N> } = {
  "browser.observe_dom": (args, { doc, registry }) => {
    const observation = buildObservation(doc, registry, args);
    const n = observation.summary.elements?.length ?? 0;
    return { ok: true, message: `Read the page (${n} interactive element${n === 1 ? "" : "s"})`, observation };
  },
  "browser.click": (args, { registry, expected }) => {
    const el = target(registry, args.handleId, expected);
    if (isFailure(el)) return el;
    if (!isRendered(el)) return fail("NOT_VISIBLE", `${describe(el)} is not visible`);
    if ((el as HTMLButtonElement).disabled) return fail("DISABLED", `${describe(el)} is disabled`);
    (el as HTMLElement).scrollIntoView?.({ block: "center" });
    (el as HTMLElement).click();
    return { ok: true, message: `Clicked ${describe(el)}` };
  },
  "browser.type": (args, { registry, expected }) => {
    const el = target(registry, args.handleId, expected);
    if (isFailure(el)) return el;
    const text = str(args.text);
    if (text === null) return fail("INVALID_ARGUMENTS", "text is missing");
    if (text.length > MAX_TYPE_CHARS) return fail("INVALID_ARGUMENTS", "text is too long");
    const tag = el.tagName.toLowerCase();
    (el as HTMLElement).focus?.();
    if (tag === "input" || tag === "textarea") {
      const input = el as HTMLInputElement;
      if (input.disabled || input.readOnly) return fail("NOT_EDITABLE", "the field is read-only");
      setNativeValue(input, text);
    } else if ((el as HTMLElement).isContentEditable || el.getAttribute("contenteditable") === "true") {
      el.textContent = text;
    } else {
      return fail("NOT_EDITABLE", `${describe(el)} is not a text field`);
    }
    el.dispatchEvent(new Event("input", { bubbles: true }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
    return { ok: true, message: `Typed ${Array.from(text).length} characters` };
  },
  "browser.select": (args, { registry, expected }) => {
    const el = target(registry, args.handleId, expected);
    if (isFailure(el)) return el;
    const value = str(args.value);
    if (value === null) return fail("INVALID_ARGUMENTS", "value is missing");
    if (el.tagName.toLowerCase() !== "select") return fail("NOT_EDITABLE", `${describe(el)} is not a list box`);
    const select = el as HTMLSelectElement;
    const option = Array.from(select.options).find((o) => o.value === value || normalize(o.text) === normalize(value));
    if (!option) return fail("NO_SUCH_OPTION", "no such option");
    select.value = option.value;
    select.dispatchEvent(new Event("input", { bubbles: true }));
    select.dispatchEvent(new Event("change", { bubbles: true }));
    return { ok: true, message: `Selected "${clip(normalize(option.text), 60)}"` };
  },
  "browser.scroll": (args, { doc }) => {
    const dy = args.deltaY;
    if (typeof dy !== "number" || !Number.isFinite(dy)) return fail("INVALID_ARGUMENTS", "deltaY must be a number");
    const by = Math.max(-MAX_SCROLL, Math.min(MAX_SCROLL, dy));
    doc.defaultView?.scrollBy(0, by);
    return { ok: true, message: `Scrolled ${by > 0 ? "down" : "up"} ${Math.abs(Math.round(by))} px` };
  },
  "browser.get_selection_links": (args, { doc }) => {
    const max = typeof args.maxLinks === "number" ? Math.max(0, Math.min(200, args.maxLinks)) : 50;
    const sel = doc.defaultView?.getSelection();
    const links: { text: string; url: string }[] = [];
    if (sel) {
      for (let i = 0; i < sel.rangeCount; i++) {
        const range = sel.getRangeAt(i);
        for (const a of Array.from(doc.querySelectorAll("a[href]"))) {
          if (links.length >= max) break;
          const url = safeUrl(a.getAttribute("href"), doc.baseURI);
          if (url && range.intersectsNode(a)) links.push({ text: clip(normalize(a.textContent ?? ""), 120), url });
        }
      }
    }
    return { ok: true, message: `${links.length} link(s) in the selection`, data: { links } };
  },
};

/**
 * Runs a page tool. `expected` is the `tool_call`'s `target` (null when the
 * call names no observed element): handle calls act only on that element.
 */
export function runPageTool(
  doc: Document,
  registry: HandleRegistry,
  name: string,
  args: Record<string, unknown>,
  expected: ToolTarget | null = null,
): ToolOutcome {
  if (!isPageTool(name)) return fail("NOT_A_PAGE_TOOL", `${name} is not a page tool`);
  const handler: (args: Record<string, unknown>, ctx: PageContext) => ToolOutcome = PAGE_HANDLERS[name];
  return handler(args, { doc, registry, expected });
}

const HIGHLIGHT_ATTR = "data-laika-highlighted";
const HIGHLIGHT_MS = 4000;

/** Finds the deepest element under `root` whose text contains the quote. */
export function findQuote(root: Element, quote: string): Element | null {
  const q = normalize(quote).toLowerCase();
  if (!q) return null;
  const probe = q.length > 80 ? q.slice(0, 80) : q;
  if (!normalize(root.textContent ?? "").toLowerCase().includes(probe)) return null;
  let best: Element = root;
  const walker = root.ownerDocument.createTreeWalker(root, 1);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n as Element;
    if (["script", "style", "noscript", "template"].includes(el.tagName.toLowerCase())) continue;
    // Deeper matches come later in document order and are smaller.
    if (normalize(el.textContent ?? "").toLowerCase().includes(probe)) best = el;
  }
  return best;
}

/**
 * Scrolls to and marks a citation: the quoted words themselves when they
 * are found (selected, as a text fragment marks them), else the cited
 * element (by handle, else by quote) outlined. The marker attribute is an
 * output for people and tests, never read back.
 */
export function highlight(doc: Document, registry: HandleRegistry, handle?: string, quote?: string): ToolOutcome {
  let el: Element | null = handle ? registry.resolve(handle) : null;
  if (quote) {
    // Prefer the quoted passage inside the cited element, else anywhere on the page.
    const inside = el ? findQuote(el, quote) : null;
    el = inside ?? (doc.body ? findQuote(doc.body, quote) : null) ?? el;
  }
  if (!el) return fail("NOT_FOUND", "the cited text is no longer on this page");
  for (const old of Array.from(doc.querySelectorAll(`[${HIGHLIGHT_ATTR}]`))) {
    old.removeAttribute(HIGHLIGHT_ATTR);
    (old as HTMLElement).style?.removeProperty("outline");
  }
  const h = el as HTMLElement;
  h.setAttribute(HIGHLIGHT_ATTR, "1");
  const words = quote ? quoteRange(el, quote) : null;
  const selection = doc.defaultView?.getSelection();
  if (words && selection) {
    // The sentence, not the whole element around it (an article's one big text block, say).
    selection.removeAllRanges();
    selection.addRange(words);
    const at = words.startContainer.parentElement ?? h;
    at.scrollIntoView?.({ block: "center", behavior: "smooth" });
  } else {
    h.scrollIntoView?.({ block: "center", behavior: "smooth" });
    h.style?.setProperty("outline", "3px solid #f5a524");
  }
  doc.defaultView?.setTimeout(() => {
    h.removeAttribute(HIGHLIGHT_ATTR);
    h.style?.removeProperty("outline");
  }, HIGHLIGHT_MS);
  return { ok: true, message: "highlighted" };
}

/** The host refuses a longer selection (observation.rs MAX_SELECTION_CHARS); clip it here. */
export const MAX_SELECTION_CHARS = 20_000;

/**
 * The text the user selected on the page, whitespace tidied and clipped.
 * Text selected inside a form field is not included: field values are never read.
 */
export function selectedText(doc: Document): string {
  const text = doc.defaultView?.getSelection()?.toString() ?? "";
  const tidy = text.replace(/[ \t]+/g, " ").replace(/\s*\n\s*/g, "\n").trim();
  return Array.from(tidy).slice(0, MAX_SELECTION_CHARS).join("");
}
