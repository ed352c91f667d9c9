/**
 * The page's primary content: the element that holds the main text, and that
 * text. This is a simple Readability-based implementation; the signature is
 * the stable contract the observation builder relies on.
 */
import { Readability } from "@mozilla/readability";

function norm(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}

const CANDIDATES = "article, main, [role=main], [role=article], section, div";

/** Finds the deepest element of `doc` whose text contains both ends of `text`. */
function locate(doc: Document, text: string): Element | null {
  const head = text.slice(0, 60);
  const tail = text.slice(Math.max(0, text.length - 60));
  let best: Element | null = null;
  let bestLen = Infinity;
  for (const el of Array.from(doc.querySelectorAll(CANDIDATES))) {
    const t = norm(el.textContent ?? "");
    if (t.length < bestLen && t.includes(head) && t.includes(tail)) {
      best = el;
      bestLen = t.length;
    }
  }
  return best;
}

/** Hidden in the live page (Readability only sees inline styles on a clone). */
function hiddenInPage(el: Element): boolean {
  if (el.hasAttribute("hidden") || el.getAttribute("aria-hidden") === "true") return true;
  const style = el.ownerDocument.defaultView?.getComputedStyle(el);
  return style?.display === "none" || style?.visibility === "hidden";
}

/** A clone of the document without the elements that are hidden in the page. */
function visibleClone(doc: Document): Document {
  const clone = doc.cloneNode(true) as Document;
  const originals = Array.from(doc.querySelectorAll("body *"));
  const copies = Array.from(clone.querySelectorAll("body *"));
  const drop: Element[] = [];
  originals.forEach((o, i) => {
    const c = copies[i];
    if (c && !o.parentElement?.closest("[hidden]") && hiddenInPage(o)) drop.push(c);
  });
  for (const c of drop) c.remove();
  return clone;
}

export function extractPrimary(doc: Document): { element: Element | null; text: string } {
  try {
    const clone = visibleClone(doc);
    const article = new Readability(clone, { charThreshold: 200 }).parse();
    const text = norm(article?.textContent ?? "");
    if (text) return { element: locate(doc, text) ?? doc.querySelector("main, article"), text };
  } catch {
    // Readability throws on unusual documents; fall through to the fallback.
  }
  const el = doc.querySelector("main, article, [role=main]");
  return { element: el, text: norm(el?.textContent ?? "") };
}
