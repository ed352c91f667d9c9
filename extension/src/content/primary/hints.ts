/**
 * The page's own mark of its article body: schema.org `articleBody`
 * (microdata `itemprop`). When exactly one visible element carries it and it
 * holds a real article's worth of text, Readability is run on it alone, so
 * a longer block elsewhere (comments, a feature list) cannot win.
 *
 * Works on the detached clone only.
 */

/** Less text than this is a teaser or a wrapper of the lead alone, not the body. */
const MIN_MARKED_CHARS = 500;

/** Narrows `clone`'s body to its single marked article body; returns whether it did. */
export function focusOnMarkedBody(clone: Document): boolean {
  const marked = Array.from(clone.querySelectorAll("[itemprop~=articleBody]"));
  const body = clone.body;
  if (marked.length !== 1 || body === null) return false;
  const only = marked[0];
  if (only === undefined || only === body) return false;
  if ((only.textContent ?? "").replace(/\s+/g, " ").trim().length < MIN_MARKED_CHARS) return false;
  body.replaceChildren(only);
  return true;
}
