/**
 * Tab-level tools (navigation, history, search, captures and exports) and
 * the URL checks they share. Page tools run in the content script of the
 * observed tab; which tool runs where comes from the host's tool registry
 * (src/generated/tools.ts): the handler table is keyed by its `TabTool`
 * union, so a new tab tool fails the build until it has a handler.
 */
import type { TabTool, UntrustedArguments } from "../generated/tools.js";
import type { Observation } from "../generated/wire.js";
import { ext } from "../shared/api.js";
import { isObject } from "../shared/json.js";
import { shareRequest, type ShareRequest } from "../shared/share.js";
import { observe } from "./content.js";
import { ToolFailure } from "./results.js";

/** Longest wait for a captured page to load in its background tab. */
export const CAPTURE_LOAD_MS = 15_000;

const ENGINES: Record<string, string> = {
  duckduckgo: "https://duckduckgo.com/?q=",
  google: "https://www.google.com/search?q=",
  bing: "https://www.bing.com/search?q=",
};

/** Only http(s) URLs may be opened; credentials are refused. */
export function webUrl(raw: unknown): string | null {
  if (typeof raw !== "string") return null;
  try {
    const u = new URL(raw);
    if ((u.protocol !== "http:" && u.protocol !== "https:") || u.username || u.password) return null;
    return u.href;
  } catch {
    return null;
  }
}

export function searchUrl(args: UntrustedArguments<"search">): string | null {
  const q = args.query;
  if (typeof q !== "string" || !q.trim() || q.length > 2000) return null;
  const engine = args.engine === undefined ? "duckduckgo" : args.engine;
  // An unknown engine is refused, never replaced by a default.
  if (typeof engine !== "string") return null;
  const base = Object.hasOwn(ENGINES, engine.trim().toLowerCase()) ? ENGINES[engine.trim().toLowerCase()] : undefined;
  if (base === undefined) return null;
  return base + encodeURIComponent(q);
}

/** Has the sidebar that asked the turn write an export; resolves with what it did. */
export type Sharer = (req: ShareRequest) => Promise<string>;

/** What a tab tool did: the tab to re-observe, a message, and for a capture the page it read. */
export interface TabOutcome {
  tabId: number;
  message: string;
  observation?: Observation;
}

/** What a tab tool acts with: the turn's tab, what the host prepared, the sidebar's export writer. */
interface TabContext {
  tabId: number;
  input: unknown;
  share: Sharer;
}

type TabHandler<N extends TabTool> = (args: UntrustedArguments<N>, ctx: TabContext) => Promise<TabOutcome>;

function openable(raw: unknown, what: string): string {
  const url = webUrl(raw);
  if (!url) throw new ToolFailure("INVALID_URL", `only http(s) URLs without credentials can be ${what}`);
  return url;
}

const TAB_HANDLERS: { [N in TabTool]: TabHandler<N> } = {
  "browser.navigate": async (args, { tabId }) => {
    const url = openable(args.url, "opened");
    await ext.tabs.update(tabId, { url });
    return { tabId, message: `Opened ${url}` };
  },
  "browser.open_tab": async (args, { tabId }) => {
    const url = openable(args.url, "opened");
    const tab = await ext.tabs.create({ url });
    return { tabId: tab.id ?? tabId, message: `Opened ${url} in a new tab` };
  },
  "browser.back": async (_args, { tabId }) => {
    await ext.tabs.goBack(tabId);
    return { tabId, message: "Went back" };
  },
  "browser.forward": async (_args, { tabId }) => {
    await ext.tabs.goForward(tabId);
    return { tabId, message: "Went forward" };
  },
  "browser.refresh": async (_args, { tabId }) => {
    await ext.tabs.reload(tabId);
    return { tabId, message: "Reloaded the page" };
  },
  "source.capture": async (args, { tabId }) => {
    const url = openable(args.url, "captured");
    return { tabId, ...(await capture(url)) };
  },
  "source.refresh": async (_args, { tabId, input }) => {
    const url = webUrl(isObject(input) ? input["url"] : undefined);
    if (!url) throw new ToolFailure("INVALID_URL", "the host gave no http(s) URL to read the source from");
    return { tabId, ...(await capture(url)) };
  },
  "artifact.share": async (_args, { tabId, input, share }) => {
    const req = shareRequest(input);
    if (!req) throw new ToolFailure("INVALID_EXPORT", "the host's export is not a file name, type and text to share");
    return { tabId, message: await share(req) };
  },
  search: async (args, { tabId }) => {
    const url = searchUrl(args);
    if (!url) throw new ToolFailure("INVALID_ARGUMENTS", "the search query is empty or too long, or the engine is not duckduckgo, google or bing");
    if (args.newTab === true) {
      const tab = await ext.tabs.create({ url });
      return { tabId: tab.id ?? tabId, message: `Searched for “${String(args.query)}” in a new tab` };
    }
    await ext.tabs.update(tabId, { url });
    return { tabId, message: `Searched for “${String(args.query)}”` };
  },
};

/**
 * Runs a tab-level tool; returns the tab to re-observe and a message, and
 * for a capture the page it read (the turn's own tab is left alone).
 * `input` is what the host prepared for the call (`source.refresh`: the
 * source's URL; `artifact.share`: the export).
 */
export async function runTabTool(
  tabId: number,
  name: TabTool,
  args: Record<string, unknown>,
  input: unknown,
  share: Sharer,
): Promise<TabOutcome> {
  const handler: (args: Record<string, unknown>, ctx: TabContext) => Promise<TabOutcome> = TAB_HANDLERS[name];
  return handler(args, { tabId, input, share });
}

/**
 * Opens `url` in a background tab, reads it with the same observation
 * builder as any page, and closes the tab whatever happened.
 */
export async function capture(url: string): Promise<{ message: string; observation: Observation }> {
  const tab = await ext.tabs.create({ url, active: false });
  const id = tab.id;
  if (id === undefined) throw new ToolFailure("TAB_FAILED", "the browser did not open a tab for the capture");
  try {
    const loaded = await waitForLoad(id, CAPTURE_LOAD_MS);
    const observation = await observe(id);
    const note = loaded ? "" : ` (still loading after ${CAPTURE_LOAD_MS / 1000} s)`;
    return { message: `Read ${url}${note}`, observation };
  } catch (e) {
    throw new ToolFailure("CAPTURE_FAILED", `could not read ${url}: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    await ext.tabs.remove(id).catch(() => undefined);
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Resolves when the tab has finished loading after an action: first lets a
 * navigation the action started begin, then waits until the tab says
 * `complete` (true) or `timeoutMs` passed or the tab is gone (false).
 */
export async function waitForLoad(tabId: number, timeoutMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  await sleep(Math.min(400, timeoutMs));
  let completeSince: number | null = null;
  while (Date.now() < deadline) {
    const tab = await ext.tabs.get(tabId).catch(() => null);
    if (!tab) return false;
    if (tab.status === "complete") {
      // Complete twice in a row, a little apart: not the old page just before it unloads.
      if (completeSince !== null && Date.now() - completeSince >= 150) return true;
      completeSince ??= Date.now();
    } else {
      completeSince = null;
    }
    await sleep(100);
  }
  return false;
}
