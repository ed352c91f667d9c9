/**
 * Running one gated browser call (the call state machine, `calls.ts`,
 * decides whether it may): a page tool in the content script of the turn's
 * tab, a tab tool here; after an action that may change the page, wait for
 * the tab to load (at most 15 s) and observe it again, so the host re-asks
 * the model with the page as it now is.
 */
import { isPageTool, isTabTool, type BrowserTool } from "../generated/tools.js";
import type { Observation } from "../generated/wire.js";
import type { Call } from "./calls.js";
import { observe, toContent } from "./content.js";
import { failure, ToolFailure, type CallOutcome } from "./results.js";
import { runTabTool, waitForLoad, type Sharer } from "./tools.js";

/** Longest wait for a page to load after an action. */
export const PAGE_LOAD_MS = 15_000;

/**
 * Whether the page is observed again after a call (it may have changed it).
 * Keyed by every tool the extension runs: a new one fails the build until
 * it says.
 */
const OBSERVE_AFTER: Record<BrowserTool, boolean> = {
  "browser.observe_dom": false,
  "browser.get_selection_links": false,
  "browser.click": true,
  "browser.type": true,
  "browser.select": true,
  "browser.scroll": true,
  "browser.navigate": true,
  "browser.open_tab": true,
  "browser.back": true,
  "browser.forward": true,
  "browser.refresh": true,
  search: true,
  "source.capture": false,
  "source.refresh": false,
  "artifact.share": false,
};

export interface RunResult {
  outcome: CallOutcome;
  /** The tab the turn acts on from now on (a new tab after open_tab or a search in a new tab). */
  tabId: number;
}

export async function runCall(call: Call<unknown>, tabId: number, share: Sharer): Promise<RunResult> {
  let tab = tabId;
  try {
    let message: string;
    let data: Record<string, unknown> | undefined;
    let observation: Observation | undefined;
    const name = call.name;
    if (isPageTool(name)) {
      const res = await toContent(tab, { kind: "tool", name, args: call.args, target: call.target });
      if (!res.ok) throw new ToolFailure(res.code ?? "TOOL_FAILED", res.error);
      message = res.message ?? "Done";
      data = res.data;
      observation = res.observation;
    } else if (isTabTool(name)) {
      const r = await runTabTool(tab, name, call.args, call.input, share);
      tab = r.tabId;
      message = r.message;
      observation = r.observation;
    } else {
      throw new ToolFailure("NOT_A_BROWSER_TOOL", `${name} is not a tool Laika can run in the browser`);
    }
    if (OBSERVE_AFTER[name]) {
      const loaded = await waitForLoad(tab, PAGE_LOAD_MS);
      try {
        observation = await observe(tab);
      } catch (e) {
        message += ` (the page could not be read afterwards: ${e instanceof Error ? e.message : String(e)})`;
      }
      if (!loaded) message += ` (the page was still loading after ${PAGE_LOAD_MS / 1000} s)`;
    }
    return { outcome: { status: "ok", message, data, observation }, tabId: tab };
  } catch (e) {
    return { outcome: failure(e), tabId: tab };
  }
}
