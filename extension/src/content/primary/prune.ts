/**
 * Removes boilerplate that Readability leaves inside the article container:
 * figures and captions, bylines and datelines, share/related/newsletter
 * widgets, navigation lists and other link-dense blocks.
 *
 * Works only on the detached clone Readability returned. Invariant: apart
 * from `<nav>`/`<footer>` chrome that wraps no marked main content, a node is
 * removed only if it holds well under half of the article's text (the
 * share guard of `PrimaryOptions`), so a misleading class name on the real article container can
 * never empty the result.
 */

import { isMetaLine, NOISE_WORDS } from "./boilerplate";
import { isBlock } from "./text";
import { DEFAULT_PRIMARY_OPTIONS, type PrimaryOptions } from "./options";

/** Tags that are boilerplate whenever they sit inside an article body. */
const NOISE_TAGS = new Set([
  "ASIDE",
  "BUTTON",
  "FIGCAPTION",
  "FIGURE",
  "FOOTER",
  "FORM",
  "HEADER",
  "INPUT",
  "LABEL",
  "NAV",
  "SELECT",
  "TEXTAREA",
]);

/** Roles that mark page chrome rather than content. */
const NOISE_ROLES = new Set([
  "banner",
  "complementary",
  "contentinfo",
  "dialog",
  "navigation",
  "menu",
  "menubar",
  "toolbar",
  "tooltip",
  "alert",
  "search",
]);

function classWords(el: Element): string[] {
  const raw = `${el.getAttribute("class") ?? ""} ${el.getAttribute("id") ?? ""}`;
  return raw
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
}

function textLength(el: Element): number {
  return (el.textContent ?? "").replace(/\s+/g, " ").trim().length;
}

function linkTextLength(el: Element): number {
  let n = 0;
  for (const a of Array.from(el.getElementsByTagName("a"))) {
    n += textLength(a);
  }
  return n;
}

/**
 * Original tag name of a clone element. Readability renames some elements
 * (e.g. a `<footer>` sibling becomes a `<div>`), so callers pass a lookup
 * into the live page; the default trusts the clone.
 */
export type TagOf = (el: Element) => string;

function isNoise(el: Element, tag: string): boolean {
  if (NOISE_TAGS.has(tag)) return true;
  const role = (el.getAttribute("role") ?? "").toLowerCase();
  if (NOISE_ROLES.has(role)) return true;
  if (el.getAttribute("aria-hidden") === "true" || el.hasAttribute("hidden")) return true;
  return classWords(el).some((w) => NOISE_WORDS.has(w));
}

const LINK_BLOCK_TAGS = new Set(["UL", "OL", "DL", "DIV", "SECTION", "TABLE"]);
const LINK_LINE_TAGS = new Set(["P", "LI", "H2", "H3", "H4", "H5", "H6"]);

/**
 * Containers mostly made of link text are navigation or "related" lists.
 * Single paragraphs or items only count when short and nearly all link:
 * prose with inline links, or a linked headline followed by a sentence of
 * its own, is still content.
 */
function isLinkBlock(el: Element, len: number, density: number): boolean {
  if (len === 0) return false;
  const tag = el.tagName.toUpperCase();
  if (LINK_BLOCK_TAGS.has(tag)) return linkTextLength(el) / len > density;
  if (LINK_LINE_TAGS.has(tag) && len < 200) {
    const linked = linkTextLength(el);
    return linked / len > 0.5 && len - linked < 40;
  }
  return false;
}

/** Prune `root` in place (it must be detached or a clone). */
export function pruneArticle(
  root: Element,
  tagOf: TagOf = (el) => el.tagName.toUpperCase(),
  options: Readonly<PrimaryOptions> = DEFAULT_PRIMARY_OPTIONS,
): void {
  const total = textLength(root);
  if (total === 0) return;
  const guard = total * options.shareGuard;
  // Snapshot first: removing while iterating a live collection skips nodes.
  const all = Array.from(root.getElementsByTagName("*"));
  for (const el of all) {
    if (!root.contains(el) || el.closest("[itemprop~=articleBody]") === el) continue;
    const tag = tagOf(el);
    if (isChrome(el, tag)) {
      el.remove();
      continue;
    }
    const len = textLength(el);
    if (len >= guard) continue;
    if (isNoise(el, tag) || isLinkBlock(el, len, options.linkDensity) || (len < 160 && isMetaLine(flat(el)) && standsAlone(el))) {
      el.remove();
    }
  }
}

/**
 * Page chrome by its own semantic tag or role is dropped whatever its size
 * (on a thin page the footer can outweigh the text), unless it wraps
 * something that is itself marked as the main content.
 */
function isChrome(el: Element, tag: string): boolean {
  const role = (el.getAttribute("role") ?? "").toLowerCase();
  const chrome =
    tag === "NAV" || tag === "FOOTER" || role === "navigation" || role === "contentinfo";
  return chrome && el.querySelector("article, main, [itemprop~=articleBody], [role=main]") === null;
}

/**
 * Whether the element is a line of its own: a block, or all the text of the
 * block it sits in. A link or name inside a sentence is never cut out of it.
 */
function standsAlone(el: Element): boolean {
  if (isBlock(el)) return true;
  let block = el.parentElement;
  while (block !== null && !isBlock(block)) block = block.parentElement;
  return block === null || flat(block) === flat(el);
}

function flat(el: Element): string {
  return (el.textContent ?? "").replace(/\s+/g, " ").trim();
}
