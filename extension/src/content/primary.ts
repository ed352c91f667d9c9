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

export function extractPrimary(doc: Document): { element: Element | null; text: string } {
  try {
    const clone = doc.cloneNode(true) as Document;
    const article = new Readability(clone, { charThreshold: 200 }).parse();
    const text = norm(article?.textContent ?? "");
    if (text) return { element: locate(doc, text) ?? doc.querySelector("main, article"), text };
  } catch {
    // Readability throws on unusual documents; fall through to the fallback.
  }
  const el = doc.querySelector("main, article, [role=main]");
  return { element: el, text: norm(el?.textContent ?? "") };
}
