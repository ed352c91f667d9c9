/**
 * Render AST → Markdown, for "Copy" and the Markdown export. Same input
 * checks as the DOM renderer: unknown nodes are skipped, only safe links
 * keep their target.
 */
import { isObject } from "../shared/json.js";
import { safeHref } from "./render.js";

const MAX_DEPTH = 32;

function kids(node: Record<string, unknown>, key: string): unknown[] {
  const v = node[key];
  return Array.isArray(v) ? v : [];
}

function inline(nodes: unknown[]): string {
  return nodes
    .map((n) => {
      if (!isObject(n)) return "";
      if (n["type"] === "text" && typeof n["text"] === "string") return n["text"];
      if (n["type"] === "link") {
        const label = inline(kids(n, "children"));
        const href = safeHref(n["href"]);
        return href ? `[${label || href}](${href})` : label;
      }
      return "";
    })
    .join("");
}

function block(node: unknown, depth: number, indent: string): string {
  if (!isObject(node) || depth > MAX_DEPTH) return "";
  switch (node["type"]) {
    case "heading": {
      const lvl = typeof node["level"] === "number" ? Math.min(6, Math.max(1, Math.trunc(node["level"]))) : 2;
      return `${indent}${"#".repeat(lvl)} ${inline(kids(node, "children"))}`;
    }
    case "paragraph":
      return indent + inline(kids(node, "children"));
    case "list":
      return kids(node, "items")
        .filter((i) => isObject(i) && i["type"] === "list_item")
        .map((item, i) => {
          const mark = node["ordered"] === true ? `${i + 1}. ` : "- ";
          const body = kids(item as Record<string, unknown>, "children")
            .map((c) => block(c, depth + 1, `${indent}  `).trimStart())
            .filter(Boolean)
            .join(`\n${indent}  `);
          return `${indent}${mark}${body}`;
        })
        .join("\n");
    case "blockquote":
      return kids(node, "children")
        .map((c) => block(c, depth + 1, ""))
        .join("\n\n")
        .split("\n")
        .map((l) => `${indent}> ${l}`)
        .join("\n");
    case "code_block": {
      const text = typeof node["text"] === "string" ? node["text"] : "";
      return `${indent}\`\`\`\n${text}\n${indent}\`\`\``;
    }
    case "table": {
      const rows = kids(node, "rows")
        .filter((r) => isObject(r) && r["type"] === "table_row")
        .map((r) =>
          kids(r as Record<string, unknown>, "cells").map((c) =>
            isObject(c) ? inline(kids(c, "children")).replace(/\|/g, "\\|") : "",
          ),
        );
      if (!rows.length) return "";
      const width = Math.max(...rows.map((r) => r.length));
      const line = (r: string[]) => `${indent}| ${Array.from({ length: width }, (_, i) => r[i] ?? "").join(" | ")} |`;
      const [head, ...rest] = rows;
      return [line(head ?? []), `${indent}|${" --- |".repeat(width)}`, ...rest.map(line)].join("\n");
    }
    default:
      return "";
  }
}

/** The Markdown of a `doc` render AST (empty for anything else). */
export function toMarkdown(root: unknown): string {
  if (!isObject(root) || root["type"] !== "doc") return "";
  return kids(root, "children")
    .map((b) => block(b, 0, ""))
    .filter(Boolean)
    .join("\n\n");
}

/**
 * A numbered list of an answer's sources, as its [n] markers count them:
 * each quote, and its page linked when the citation names one (a
 * collection's source) or `pageUrl` (the page the turn read). Citations are
 * read defensively: stored ones come back as JSON. Empty without citations.
 */
export function sourcesMarkdown(citations: readonly unknown[], pageUrl?: string | null): string {
  const page = pageUrl ? safeHref(pageUrl) : null;
  const lines = citations.map((c, i) => {
    const quote = isObject(c) && typeof c["quote"] === "string" ? c["quote"].replace(/\s+/g, " ").trim() : "";
    const source = isObject(c) && isObject(c["source"]) ? c["source"] : null;
    const href = source ? safeHref(source["url"]) : isObject(c) && c["doc_id"] === "doc:web:selection" ? null : page;
    const title = source && typeof source["title"] === "string" && source["title"] ? source["title"] : href;
    return `${i + 1}. “${quote}”${href ? ` — [${title ?? href}](${href})` : ""}`;
  });
  return lines.length ? `Sources:\n\n${lines.join("\n")}` : "";
}
