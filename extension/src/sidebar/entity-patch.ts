/**
 * Applies the host's `entity_patch` operations (RFC 6902: `add`, `remove`,
 * `replace`; docs/wire-protocol.md#entity_patch) to the state the sidebar
 * keeps. The host's state is the truth: the sidebar changes its copy only
 * by these operations, never by reading the answer's text.
 *
 * Pure: the input is not changed. A patch that does not apply (a path its
 * target lacks) is refused whole, so the copy never holds half a change.
 */
import type { PatchOp } from "../generated/wire.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** `doc` with `ops` applied, or `null` when one of them does not apply. */
export function applyPatch<T>(doc: T | null, ops: readonly PatchOp[]): T | null {
  let root = structuredClone(doc) as Json;
  for (const op of ops) {
    if (op.path === "") {
      if (op.op === "remove") return null;
      root = structuredClone(op.value) as Json;
      continue;
    }
    const tokens = op.path.split("/").slice(1).map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));
    const last = tokens.pop();
    let parent: Json = root;
    for (const token of tokens) {
      const next: Json | undefined = Array.isArray(parent) ? parent[Number(token)] : isObject(parent) ? parent[token] : undefined;
      if (next === undefined) return null;
      parent = next;
    }
    if (last === undefined || !apply(parent, last, op)) return null;
  }
  return root as T;
}

function isObject(v: Json): v is { [key: string]: Json } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function apply(parent: Json, key: string, op: PatchOp): boolean {
  const value = op.op === "remove" ? undefined : (structuredClone(op.value) as Json);
  if (Array.isArray(parent)) {
    const append = key === "-" && op.op === "add";
    const i = append ? parent.length : Number(key);
    if (!Number.isInteger(i) || i < 0 || i > parent.length || (!append && op.op !== "add" && i === parent.length)) return false;
    if (op.op === "remove") parent.splice(i, 1);
    else if (op.op === "replace") parent[i] = value as Json;
    else parent.splice(i, 0, value as Json);
    return true;
  }
  if (!isObject(parent)) return false;
  if (op.op !== "add" && !(key in parent)) return false;
  if (op.op === "remove") delete parent[key];
  else parent[key] = value as Json;
  return true;
}
