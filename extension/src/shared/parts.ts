/**
 * Reassembly of `part` messages (docs/wire-protocol.md, "Host → browser").
 * Parts of different messages may interleave; state is kept per `part_of`
 * and bounded so a runaway sender cannot exhaust memory.
 */
import type { PartMessage } from "../generated/wire.js";

export const MAX_PENDING_CHARS = 256 * 1024 * 1024;

export type PartOutcome =
  | { kind: "pending" }
  | { kind: "complete"; value: unknown }
  | { kind: "error"; error: string };

interface Pending {
  count: number;
  parts: Map<number, string>;
  chars: number;
}

export class PartAssembler {
  private pending = new Map<string, Pending>();
  private totalChars = 0;

  constructor(private readonly maxChars: number = MAX_PENDING_CHARS) {}

  /** Adds one (already schema-validated) part. */
  add(part: PartMessage): PartOutcome {
    const { part_of: key, index, count, data } = part;
    if (!Number.isInteger(index) || !Number.isInteger(count) || index < 0 || count < 1 || index >= count) {
      this.drop(key);
      return { kind: "error", error: `part ${index} of ${count} is out of range` };
    }
    let p = this.pending.get(key);
    if (!p) {
      p = { count, parts: new Map(), chars: 0 };
      this.pending.set(key, p);
    }
    if (p.count !== count || p.parts.has(index)) {
      this.drop(key);
      return { kind: "error", error: "inconsistent part (count changed or index repeated)" };
    }
    p.parts.set(index, data);
    p.chars += data.length;
    this.totalChars += data.length;
    if (this.totalChars > this.maxChars) {
      this.drop(key);
      return { kind: "error", error: "reassembled message is too large" };
    }
    if (p.parts.size < p.count) return { kind: "pending" };
    this.drop(key);
    const pieces: string[] = [];
    for (let i = 0; i < p.count; i++) pieces.push(p.parts.get(i) ?? "");
    try {
      return { kind: "complete", value: JSON.parse(pieces.join("")) as unknown };
    } catch (e) {
      return { kind: "error", error: `reassembled message is not JSON: ${String(e)}` };
    }
  }

  /** Forgets everything (the port disconnected). */
  reset(): void {
    this.pending.clear();
    this.totalChars = 0;
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  private drop(key: string): void {
    const p = this.pending.get(key);
    if (p) this.totalChars -= p.chars;
    this.pending.delete(key);
  }
}
