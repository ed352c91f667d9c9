/**
 * `artifact.share` in the extension: the host renders the export (its
 * `agent_state.input`), the sidebar that asked the turn writes it to a file
 * (a download) or the clipboard. The input comes from the host, but it is
 * checked before it reaches a download or the clipboard all the same.
 */
import { isObject } from "./json.js";

export interface ShareRequest {
  filename: string;
  mime: string;
  content: string;
  target: "file" | "clipboard";
}

const MIMES: ReadonlySet<string> = new Set(["text/markdown", "text/plain", "application/json", "text/csv"]);
/** The host's exports are bounded well below this. */
const MAX_CONTENT = 8 << 20;

/** A file name with no directory part, no leading dot and no control characters. */
function safeName(raw: string): string | null {
  const name = raw.trim();
  const control = [...name].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
  if (!name || name.length > 200 || control || /[/\\]/.test(name) || name.startsWith(".")) return null;
  return name;
}

/** The share the host prepared, or null if it is not one. */
export function shareRequest(input: unknown): ShareRequest | null {
  if (!isObject(input)) return null;
  const { filename, mime, content, target } = input;
  if (typeof filename !== "string" || typeof mime !== "string" || typeof content !== "string") return null;
  if (target !== "file" && target !== "clipboard") return null;
  const name = safeName(filename);
  if (!name || !MIMES.has(mime) || content.length > MAX_CONTENT) return null;
  return { filename: name, mime, content, target };
}

/** What the tool result says once the sidebar wrote it. */
export function shareMessage(req: ShareRequest): string {
  return req.target === "clipboard"
    ? `Copied ${req.filename} (${req.content.length} characters) to the clipboard`
    : `Saved ${req.filename} (${req.content.length} characters) as a download`;
}
