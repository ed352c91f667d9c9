// Plain Readability.js (its textContent) behind the same interface as
// extension/src/content/primary.ts, so the harness can score both alike.
import { Readability } from "@mozilla/readability";

export function extractPrimary(doc: Document): { element: Element | null; text: string } {
  const parsed = new Readability(doc.cloneNode(true) as Document).parse();
  return { element: null, text: parsed?.textContent ?? "" };
}
