/**
 * The page's structured data (schema.org JSON-LD blocks and microdata), as
 * flat facts for `summary.structured`: `{item, item_type, property, value}`.
 *
 * The page wrote this for machines and nobody sees it, so it is untrusted
 * data like the rest of the observation (it may lie or carry injected
 * instructions; the host only ever treats it as data). Reading it is bounded:
 * at most `MAX_SCRIPTS` blocks of at most `MAX_SCRIPT_CHARS` each are parsed,
 * nesting is followed `MAX_DEPTH` levels, at most `MAX_FACTS` facts are kept
 * and each value is clipped. A block that is not JSON is skipped.
 */
import type { StructuredFact } from "../generated/wire.js";

export const MAX_SCRIPTS = 16;
export const MAX_SCRIPT_CHARS = 100_000;
export const MAX_FACTS = 300;
export const MAX_VALUE_CHARS = 400;
export const MAX_DEPTH = 5;
const MAX_KEY_CHARS = 60;
const MAX_MICRODATA = 400;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Node = { [key: string]: Json };

function isNode(v: Json | undefined): v is Node {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A schema.org name without its vocabulary's address ("https://schema.org/Product" → "Product"). */
function bareName(s: string): string {
  return s.replace(/^https?:\/\/schema\.org\//i, "").trim();
}

function typeOf(node: Node): string {
  const t = node["@type"];
  const first = Array.isArray(t) ? t.find((x) => typeof x === "string") : t;
  return typeof first === "string" ? bareName(first).slice(0, MAX_KEY_CHARS) : "";
}

/** A value as text: markup and whitespace runs gone, clipped. */
function text(v: string): string {
  const plain = v.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim();
  return plain.length > MAX_VALUE_CHARS ? `${plain.slice(0, MAX_VALUE_CHARS - 1)}…` : plain;
}

/** A key as a path segment: schema.org's own name, no dots (the path's separator). */
function segment(key: string): string {
  return bareName(key).replace(/[.\s]+/g, "_").slice(0, MAX_KEY_CHARS);
}

class Facts {
  readonly out: StructuredFact[] = [];
  items = 0;

  get full(): boolean {
    return this.out.length >= MAX_FACTS;
  }

  add(item: number, itemType: string, property: string, value: string): void {
    const v = text(value);
    if (!v || !property || this.full) return;
    this.out.push({ item, item_type: itemType, property, value: v });
  }
}

/** Flattens one JSON-LD node's properties into `facts` under `path`. */
function flatten(facts: Facts, item: number, itemType: string, node: Node, path: string, depth: number, byId: Map<string, Node>): void {
  for (const [key, raw] of Object.entries(node)) {
    if (facts.full) return;
    if (key.startsWith("@")) continue;
    const seg = segment(key);
    if (!seg) continue;
    const property = path ? `${path}.${seg}` : seg;
    for (const v of Array.isArray(raw) ? raw : [raw]) {
      if (facts.full) return;
      if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") {
        facts.add(item, itemType, property, String(v));
      } else if (isNode(v) && depth < MAX_DEPTH) {
        if (typeof v["@value"] === "string" || typeof v["@value"] === "number") {
          facts.add(item, itemType, property, String(v["@value"]));
          continue;
        }
        // A reference to another node of the block ({"@id": …} alone) reads that node.
        const ref = typeof v["@id"] === "string" && Object.keys(v).length === 1 ? byId.get(v["@id"]) : undefined;
        flatten(facts, item, itemType, ref ?? v, property, depth + 1, byId);
      }
    }
  }
}

/** The top-level nodes of one parsed block: itself, its array's entries, its `@graph`'s. */
function topNodes(parsed: Json): Node[] {
  const out: Node[] = [];
  for (const v of Array.isArray(parsed) ? parsed : [parsed]) {
    if (!isNode(v)) continue;
    const graph = v["@graph"];
    if (Array.isArray(graph)) out.push(...graph.filter(isNode));
    else if (isNode(graph)) out.push(graph);
    if (typeof v["@type"] !== "undefined") out.push(v);
  }
  return out;
}

function jsonLd(doc: Document, facts: Facts): void {
  const scripts = Array.from(doc.querySelectorAll('script[type="application/ld+json" i]')).slice(0, MAX_SCRIPTS);
  for (const script of scripts) {
    if (facts.full) return;
    const source = script.textContent ?? "";
    if (source.length > MAX_SCRIPT_CHARS) continue;
    let parsed: Json;
    try {
      parsed = JSON.parse(source) as Json;
    } catch {
      continue;
    }
    const nodes = topNodes(parsed);
    const byId = new Map<string, Node>();
    for (const n of nodes) if (typeof n["@id"] === "string") byId.set(n["@id"], n);
    for (const node of nodes) {
      if (facts.full) return;
      const before = facts.out.length;
      flatten(facts, facts.items, typeOf(node), node, "", 0, byId);
      if (facts.out.length > before) facts.items += 1;
    }
  }
}

/** A microdata property's value, as the microdata spec reads it. */
function itemValue(el: Element): string {
  const tag = el.tagName.toLowerCase();
  if (tag === "meta") return el.getAttribute("content") ?? "";
  if (["a", "area", "link"].includes(tag)) return el.getAttribute("href") ?? "";
  if (["img", "audio", "video", "source", "embed", "iframe", "track"].includes(tag)) return el.getAttribute("src") ?? "";
  if (tag === "time") return el.getAttribute("datetime") ?? el.textContent ?? "";
  if (tag === "data" || tag === "meter") return el.getAttribute("value") ?? "";
  return el.getAttribute("content") ?? el.textContent ?? "";
}

function microdata(doc: Document, facts: Facts): void {
  const tops = new Map<Element, number>();
  for (const el of Array.from(doc.querySelectorAll("[itemprop]")).slice(0, MAX_MICRODATA)) {
    if (facts.full) return;
    // The path: the itemprop names of the nested items up to the outermost item.
    // A nested item has no value of its own: its properties carry its name.
    if (el.hasAttribute("itemscope")) continue;
    const names: string[] = [];
    let scope = el.parentElement?.closest("[itemscope]") ?? null;
    let top: Element | null = scope;
    let depth = 0;
    while (scope && depth < MAX_DEPTH) {
      top = scope;
      const prop = scope.getAttribute("itemprop");
      if (!prop) break;
      names.unshift(segment(prop.split(/\s+/)[0] ?? ""));
      scope = scope.parentElement?.closest("[itemscope]") ?? null;
      depth += 1;
    }
    if (!top) continue;
    let item = tops.get(top);
    if (item === undefined) {
      item = facts.items;
      facts.items += 1;
      tops.set(top, item);
    }
    const itemType = bareName((top.getAttribute("itemtype") ?? "").split(/\s+/)[0] ?? "").slice(0, MAX_KEY_CHARS);
    const value = itemValue(el);
    for (const name of (el.getAttribute("itemprop") ?? "").split(/\s+/).map(segment).filter(Boolean)) {
      facts.add(item, itemType, [...names, name].join("."), value);
    }
  }
}

/** The page's structured data: its JSON-LD blocks first, then its microdata. */
export function structuredData(doc: Document): StructuredFact[] {
  const facts = new Facts();
  jsonLd(doc, facts);
  microdata(doc, facts);
  return facts.out;
}
