/**
 * Render AST → DOM, with DOM APIs only (createElement / textContent). The
 * host already sanitized the AST; this is the last line of defence, so it
 * re-checks everything: unknown nodes and fields are skipped, only
 * http/https/mailto links survive, no attribute is ever copied from the AST,
 * and nesting is bounded.
 */
import { isObject } from "../shared/json.js";

const MAX_DEPTH = 32;
const MAX_NODES = 20_000;

/** An http(s)/mailto URL without credentials, or null. */
export function safeHref(raw: unknown): string | null {
  if (typeof raw !== "string" || raw.length > 8192) return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return null;
  }
  if (u.protocol === "mailto:") return u.href;
  if (u.protocol !== "http:" && u.protocol !== "https:") return null;
  if (u.username || u.password) return null;
  return u.href;
}

interface Budget {
  nodes: number;
}

function children(node: Record<string, unknown>, key: string): unknown[] {
  const v = node[key];
  return Array.isArray(v) ? v : [];
}

function renderInline(doc: Document, node: unknown, parent: Node, budget: Budget): void {
  if (!isObject(node) || budget.nodes++ > MAX_NODES) return;
  if (node["type"] === "text" && typeof node["text"] === "string") {
    parent.appendChild(doc.createTextNode(node["text"]));
    return;
  }
  if (node["type"] === "link") {
    const label = children(node, "children")
      .map((c) => (isObject(c) && c["type"] === "text" && typeof c["text"] === "string" ? c["text"] : ""))
      .join("");
    const href = safeHref(node["href"]);
    if (!href) {
      // A refused link keeps its words, not its target.
      parent.appendChild(doc.createTextNode(label));
      return;
    }
    const a = doc.createElement("a");
    a.href = href;
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    a.textContent = label || href;
    parent.appendChild(a);
  }
}

function renderInlines(doc: Document, nodes: unknown[], parent: Node, budget: Budget): void {
  for (const n of nodes) renderInline(doc, n, parent, budget);
}

function renderBlock(doc: Document, node: unknown, parent: Node, depth: number, budget: Budget): void {
  if (!isObject(node) || depth > MAX_DEPTH || budget.nodes++ > MAX_NODES) return;
  switch (node["type"]) {
    case "heading": {
      const lvl = node["level"];
      const level = typeof lvl === "number" && Number.isInteger(lvl) ? Math.min(6, Math.max(1, lvl)) : 2;
      // The sidebar's own title is h1; answer headings start one level lower.
      const h = doc.createElement(`h${Math.min(6, level + 1)}`);
      renderInlines(doc, children(node, "children"), h, budget);
      parent.appendChild(h);
      return;
    }
    case "paragraph": {
      const p = doc.createElement("p");
      renderInlines(doc, children(node, "children"), p, budget);
      parent.appendChild(p);
      return;
    }
    case "list": {
      const list = doc.createElement(node["ordered"] === true ? "ol" : "ul");
      for (const item of children(node, "items")) {
        if (!isObject(item) || item["type"] !== "list_item") continue;
        const li = doc.createElement("li");
        for (const c of children(item, "children")) renderBlock(doc, c, li, depth + 1, budget);
        list.appendChild(li);
      }
      parent.appendChild(list);
      return;
    }
    case "blockquote": {
      const q = doc.createElement("blockquote");
      for (const c of children(node, "children")) renderBlock(doc, c, q, depth + 1, budget);
      parent.appendChild(q);
      return;
    }
    case "code_block": {
      const pre = doc.createElement("pre");
      const code = doc.createElement("code");
      code.textContent = typeof node["text"] === "string" ? node["text"] : "";
      pre.appendChild(code);
      parent.appendChild(pre);
      return;
    }
    case "table": {
      const table = doc.createElement("table");
      const tbody = doc.createElement("tbody");
      for (const row of children(node, "rows")) {
        if (!isObject(row) || row["type"] !== "table_row") continue;
        const tr = doc.createElement("tr");
        for (const cell of children(row, "cells")) {
          if (!isObject(cell) || cell["type"] !== "table_cell") continue;
          const td = doc.createElement(cell["header"] === true ? "th" : "td");
          renderInlines(doc, children(cell, "children"), td, budget);
          tr.appendChild(td);
        }
        tbody.appendChild(tr);
      }
      table.appendChild(tbody);
      parent.appendChild(table);
      return;
    }
    default:
      return;
  }
}

/** Renders a `doc` node into a fragment; anything that is not a doc renders nothing. */
export function renderDoc(doc: Document, root: unknown): DocumentFragment {
  const frag = doc.createDocumentFragment();
  if (!isObject(root) || root["type"] !== "doc") return frag;
  const budget: Budget = { nodes: 0 };
  for (const block of children(root, "children")) renderBlock(doc, block, frag, 0, budget);
  return frag;
}

/** The text of a render AST, blocks separated by spaces, for one-line previews. */
export function plainText(root: unknown): string {
  const out: string[] = [];
  let nodes = 0;
  const walk = (node: unknown, depth: number): void => {
    if (depth > MAX_DEPTH || nodes++ > MAX_NODES) return;
    if (Array.isArray(node)) {
      for (const n of node) walk(n, depth + 1);
      return;
    }
    if (!isObject(node)) return;
    if (typeof node["text"] === "string") out.push(node["text"]);
    for (const key of ["children", "items", "rows", "cells"]) {
      if (Array.isArray(node[key])) walk(node[key], depth + 1);
    }
  };
  walk(root, 0);
  return out.join(" ").replace(/\s+/g, " ").trim();
}
