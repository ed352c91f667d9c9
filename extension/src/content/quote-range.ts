/**
 * The exact words a citation quotes, as a DOM Range: what a text fragment
 * (`#:~:text=`) marks, found in the live page. Whitespace runs count as one
 * space and case is ignored, as the quote was taken from the page's text;
 * a long quote that does not match whole (markup or line breaks inside it)
 * is matched from its first words to its last, like a text directive's
 * start,end range.
 */

/** Words matched at each end of a long quote. */
const END_CHARS = 40;

interface Flat {
  /** The text under the root, whitespace runs as one space, lower case. */
  text: string;
  /** For each char of `text`: the text node and offset it came from. */
  at: { node: Text; offset: number }[];
}

function flatten(root: Element): Flat {
  const doc = root.ownerDocument;
  const walker = doc.createTreeWalker(root, 4 /* NodeFilter.SHOW_TEXT */);
  let text = "";
  const at: Flat["at"] = [];
  let space = true;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const node = n as Text;
    const parent = node.parentElement?.tagName.toLowerCase();
    if (parent && ["script", "style", "noscript", "template"].includes(parent)) continue;
    const data = node.data;
    for (let i = 0; i < data.length; i++) {
      const ch = data.charAt(i);
      if (/\s/.test(ch)) {
        if (space) continue;
        space = true;
        text += " ";
      } else {
        space = false;
        text += ch.toLowerCase();
      }
      at.push({ node, offset: i });
    }
  }
  return { text, at };
}

const squash = (s: string): string => s.replace(/\s+/g, " ").trim().toLowerCase();

/** The range of `quote` under `root`, or null when its words are not there. */
export function quoteRange(root: Element, quote: string): Range | null {
  const q = squash(quote.replace(/\u2026|\.{3}/g, " "));
  if (!q) return null;
  const flat = flatten(root);
  let start = flat.text.indexOf(q);
  let end = start + q.length;
  if (start < 0 && q.length > 2 * END_CHARS) {
    start = flat.text.indexOf(q.slice(0, END_CHARS));
    const last = start < 0 ? -1 : flat.text.indexOf(q.slice(-END_CHARS), start);
    end = last + END_CHARS;
    if (last < 0) start = -1;
  }
  const first = flat.at[start];
  const final = flat.at[end - 1];
  if (start < 0 || !first || !final) return null;
  const range = root.ownerDocument.createRange();
  range.setStart(first.node, first.offset);
  range.setEnd(final.node, final.offset + 1);
  return range;
}
