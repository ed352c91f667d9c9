/**
 * Plain-text serialisation of an extracted article subtree.
 *
 * Block-level elements become paragraphs separated by a blank line, `<br>`
 * becomes a newline, runs of whitespace inside a paragraph collapse to one
 * space. Only reads the tree; never touches layout (the tree may be detached).
 */

const BLOCK_TAGS = new Set([
  "ADDRESS",
  "ARTICLE",
  "ASIDE",
  "BLOCKQUOTE",
  "BODY",
  "CAPTION",
  "DD",
  "DETAILS",
  "DIV",
  "DL",
  "DT",
  "FIELDSET",
  "FIGCAPTION",
  "FIGURE",
  "FOOTER",
  "FORM",
  "H1",
  "H2",
  "H3",
  "H4",
  "H5",
  "H6",
  "HEADER",
  "HR",
  "LI",
  "MAIN",
  "NAV",
  "OL",
  "P",
  "PRE",
  "SECTION",
  "SUMMARY",
  "TABLE",
  "TBODY",
  "TD",
  "TFOOT",
  "TH",
  "THEAD",
  "TR",
  "UL",
]);

/** Elements whose content is never article text. */
const SKIP_TAGS = new Set([
  "SCRIPT",
  "STYLE",
  "NOSCRIPT",
  "TEMPLATE",
  "SVG",
  "MATH",
  "CANVAS",
  "IFRAME",
  "OBJECT",
  "EMBED",
  "VIDEO",
  "AUDIO",
  "SELECT",
  "TEXTAREA",
  "BUTTON",
  "INPUT",
]);

export function isBlock(el: Element): boolean {
  return BLOCK_TAGS.has(el.tagName.toUpperCase());
}

export function isSkipped(el: Element): boolean {
  return SKIP_TAGS.has(el.tagName.toUpperCase());
}

/**
 * Serialise `root` to text with paragraph breaks. `keep` may veto subtrees
 * (return false to drop an element and everything under it).
 */
export function blockText(root: Element, keep?: (el: Element) => boolean): string {
  const out: string[] = [];
  // Pending separator: 0 none, 1 newline, 2 blank line. Emitted lazily so
  // empty blocks do not pile up breaks.
  let pending = 0;
  let atStart = true;

  const emit = (s: string): void => {
    if (s.length === 0) return;
    if (!atStart && pending > 0) {
      out.push(pending >= 2 ? "\n\n" : "\n");
    }
    pending = 0;
    atStart = false;
    out.push(s);
  };

  const walk = (node: Node): void => {
    if (node.nodeType === 3) {
      const raw = node.nodeValue ?? "";
      const collapsed = raw.replace(/[\s\u00a0]+/g, " ");
      if (collapsed.trim().length === 0) {
        if (collapsed.length > 0 && out.length > 0 && pending === 0) {
          emitSpace();
        }
        return;
      }
      emit(collapsed);
      return;
    }
    if (node.nodeType !== 1) return;
    const el = node as Element;
    if (isSkipped(el)) return;
    if (keep !== undefined && el !== root && !keep(el)) return;
    const tag = el.tagName.toUpperCase();
    if (tag === "BR") {
      pending = Math.max(pending, 1);
      return;
    }
    const block = isBlock(el);
    if (block) pending = 2;
    for (let c = el.firstChild; c !== null; c = c.nextSibling) {
      walk(c);
    }
    if (block) pending = 2;
    else if (tag === "TD" || tag === "TH") emitSpace();
  };

  const emitSpace = (): void => {
    if (pending === 0 && out.length > 0) out.push(" ");
  };

  walk(root);
  return tidy(out.join(""));
}

/** Trim every line, drop whitespace-only lines beyond one blank line. */
export function tidy(text: string): string {
  const lines = text.split("\n").map((l) => l.replace(/ {2,}/g, " ").trim());
  const kept: string[] = [];
  for (const line of lines) {
    if (line.length === 0 && (kept.length === 0 || kept[kept.length - 1] === "")) continue;
    kept.push(line);
  }
  while (kept.length > 0 && kept[kept.length - 1] === "") kept.pop();
  return kept.join("\n");
}
