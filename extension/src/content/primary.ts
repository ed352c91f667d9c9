/**
 * Main-content ("primary") extraction for the content script.
 *
 * `extractPrimary(doc)` returns the article body as plain text (paragraphs
 * separated by blank lines) and the single live element that best contains it.
 *
 * Invariants: the live page is never mutated (all cleaning happens on a deep
 * clone, which is an inert document: no scripts run and nothing loads); no
 * HTML strings are written by this module; no Node APIs are used.
 */
import { Readability } from "@mozilla/readability";
import { focusOnMarkedBody } from "./primary/hints";
import { DEFAULT_PRIMARY_OPTIONS, type PrimaryOptions } from "./primary/options";
import { pruneArticle } from "./primary/prune";
import { blockText } from "./primary/text";

export interface PrimaryContent {
  /** Best single live element containing the article, or null if none. */
  element: Element | null;
  /** Article body as plain text; "" when nothing article-like was found. */
  text: string;
}

/** Attribute stamped on the clone so kept nodes can be mapped back to the live page. */
const INDEX_ATTR = "data-laika-primary-idx";

/** `options` exist for the held-out evaluation; the extension uses the defaults. */
export function extractPrimary(doc: Document, options: Readonly<PrimaryOptions> = DEFAULT_PRIMARY_OPTIONS): PrimaryContent {
  const live = doc.getElementsByTagName("*");
  const clone = doc.cloneNode(true) as Document;
  const copies = Array.from(clone.getElementsByTagName("*"));
  const n = Math.min(live.length, copies.length);
  for (let i = 0; i < n; i++) {
    copies[i]?.setAttribute(INDEX_ATTR, String(i));
  }
  dropHidden(copies, live, n);
  if (options.markedBody) focusOnMarkedBody(clone);

  const article = parseArticle(clone);
  if (article === null) {
    return { element: null, text: "" };
  }
  pruneArticle(article, (el) => liveOf(el, live)?.tagName.toUpperCase() ?? el.tagName.toUpperCase(), options);
  const text = blockText(article);
  return { element: liveContainer(article, live), text };
}

/** Readability on the clone, handing back the article element itself. */
function parseArticle(clone: Document): Element | null {
  try {
    const parsed = new Readability<Element>(clone, {
      serializer: (node: Node) => node as Element,
      // Class names feed pruneArticle.
      keepClasses: true,
    }).parse();
    return parsed?.content ?? null;
  } catch {
    // Readability throws on unusual documents: then there is no article.
    return null;
  }
}

/** Hidden in the live page: the clone has no layout, so ask the live element. */
function hiddenInPage(el: Element): boolean {
  if (el.hasAttribute("hidden") || el.getAttribute("aria-hidden") === "true") return true;
  const style = el.ownerDocument.defaultView?.getComputedStyle(el);
  return style?.display === "none" || style?.visibility === "hidden";
}

/**
 * Removes from the clone what a reader cannot see on the page. Hidden text is
 * where pages put prompt injections, and it is never part of the article.
 */
function dropHidden(copies: Element[], live: HTMLCollectionOf<Element>, n: number): void {
  const bodyLive = live[0]?.ownerDocument.body ?? null;
  for (let i = 0; i < n; i++) {
    const original = live[i];
    const copy = copies[i];
    if (original === undefined || copy === undefined || bodyLive === null) continue;
    if (!bodyLive.contains(original) || original === bodyLive) continue;
    // A removed ancestor already took this copy with it.
    if (!copy.isConnected) continue;
    if (hiddenInPage(original)) copy.remove();
  }
}

/** The live element a clone element was copied from, if it was stamped. */
function liveOf(copy: Element, live: HTMLCollectionOf<Element>): Element | null {
  const idx = Number(copy.getAttribute(INDEX_ATTR) ?? "NaN");
  return Number.isInteger(idx) ? (live[idx] ?? null) : null;
}

/**
 * Lowest common live ancestor of the live elements whose copies hold the
 * extracted text, so highlighting/scrolling targets the real article node.
 */
function liveContainer(article: Element, live: HTMLCollectionOf<Element>): Element | null {
  const holders: Element[] = [];
  const walker = article.ownerDocument.createTreeWalker(article, 4 /* SHOW_TEXT */);
  for (let t = walker.nextNode(); t !== null; t = walker.nextNode()) {
    if ((t.nodeValue ?? "").trim().length < 20) continue;
    const stamped = t.parentElement?.closest(`[${INDEX_ATTR}]`);
    const el = stamped ? liveOf(stamped, live) : null;
    if (el !== null) holders.push(el);
  }
  let common: Element | null = holders[0] ?? null;
  for (const h of holders) {
    while (common !== null && !common.contains(h)) common = common.parentElement;
  }
  return common;
}
