/**
 * What a turn reads besides the page: the user's selection (its own
 * `web.selection.v1` document, the focus of the question) and other open
 * tabs the user picked (one `web.tab.v1` document each).
 */
import { ext } from "../shared/api.js";
import type { OpenTab } from "../shared/messages.js";
import type { Observation, TabDoc } from "../generated/wire.js";
import { observe, toContent } from "./content.js";

/** observation.rs MAX_TABS / MAX_TAB_CHARS / MAX_SELECTION_CHARS. */
const MAX_TABS = 8;
const MAX_TAB_CHARS = 200_000;
const MAX_SELECTION_CHARS = 20_000;

const clip = (s: string, n: number) => Array.from(s).slice(0, n).join("");

export function isWebTab(t: chrome.tabs.Tab): t is chrome.tabs.Tab & { id: number; url: string } {
  return typeof t.url === "string" && /^(https?|file):/.test(t.url) && t.id !== undefined;
}

/** The open web tabs, most recently used first. */
export async function openTabs(): Promise<OpenTab[]> {
  const tabs = (await ext.tabs.query({})).filter(isWebTab);
  tabs.sort((a, b) => (b.lastAccessed ?? 0) - (a.lastAccessed ?? 0));
  return tabs.map((t) => ({ id: t.id, title: t.title ?? "", url: t.url }));
}

/** The tab a turn reads: the active web tab of the focused window, else the web tab used last. */
export async function targetTab(): Promise<chrome.tabs.Tab | null> {
  const tabs = await ext.tabs.query({});
  const web = tabs.filter(isWebTab);
  const focused = await ext.windows.getLastFocused().catch(() => null);
  const active = web.find((t) => t.active && focused && t.windowId === focused.id);
  if (active) return active;
  // The sidebar may itself be a tab (tests, or opened from history): use the last web tab seen.
  web.sort((a, b) => (b.lastAccessed ?? 0) - (a.lastAccessed ?? 0));
  return web[0] ?? null;
}

/** The text selected in a tab now ("" when none, or the page cannot answer). */
export async function selectionIn(tabId: number): Promise<string> {
  try {
    const res = await toContent(tabId, { kind: "selection" });
    const text = res.ok ? res.data?.["text"] : "";
    return typeof text === "string" ? text : "";
  } catch {
    return "";
  }
}

/** Adds the selection to a turn's observation. */
export function withSelection(observation: Observation, text: string | undefined, tab: chrome.tabs.Tab): Observation {
  const clipped = clip((text ?? "").trim(), MAX_SELECTION_CHARS);
  if (!clipped) return observation;
  return {
    ...observation,
    selection: { doc_type: "web.selection.v1", url: tab.url ?? observation.summary.url, title: tab.title ?? "", text: clipped },
  };
}

/**
 * Observes the picked tabs (not the turn's own) and returns them as tab
 * documents, with the tabs as the sidebar names them. A tab that cannot be
 * read is left out, not fatal: the answer says what it read.
 */
export async function pickedTabs(ids: number[] | undefined, mainTab: number): Promise<{ docs: TabDoc[]; tabs: OpenTab[] }> {
  const wanted = [...new Set((ids ?? []).filter((id) => Number.isInteger(id) && id !== mainTab))].slice(0, MAX_TABS);
  const docs: TabDoc[] = [];
  const tabs: OpenTab[] = [];
  for (const id of wanted) {
    const tab = await ext.tabs.get(id).catch(() => null);
    if (!tab || !isWebTab(tab)) continue;
    try {
      const obs = await observe(id);
      const primary = obs.summary.primary?.text ?? "";
      const text = primary.trim().length >= 200 ? primary : (obs.summary.text ?? primary);
      docs.push({ doc_type: "web.tab.v1", tab_id: String(id), url: tab.url, title: tab.title ?? "", text: clip(text, MAX_TAB_CHARS) });
      tabs.push({ id, title: tab.title ?? "", url: tab.url });
    } catch (e) {
      console.warn(`Laika: could not read tab ${id}:`, e);
    }
  }
  return { docs, tabs };
}
