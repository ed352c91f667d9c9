/**
 * Running one gated browser call (the call state machine, `calls.ts`,
 * decides whether it may): a page tool in the content script of the turn's
 * tab, a tab tool here; after an action that may change the page, wait for
 * the tab to load (at most 15 s) and observe it again, so the host re-asks
 * the model with the page as it now is.
 */
import { isPageTool, isTabTool } from "../generated/tools.js";
import type { Observation } from "../generated/wire.js";
import type { Call } from "./calls.js";
import { observe, toContent } from "./content.js";
import { failure, ToolFailure, type CallOutcome } from "./results.js";
import { runTabTool, waitForLoad, type Sharer } from "./tools.js";

/** Longest wait for a page to load after an action. */
export const PAGE_LOAD_MS = 15_000;

/** Calls after which the page is observed again. */
export const MUTATING_TOOLS: ReadonlySet<string> = new Set([
  "browser.navigate",
  "browser.open_tab",
  "browser.click",
  "browser.type",
  "browser.select",
  "browser.scroll",
  "browser.back",
  "browser.forward",
  "browser.refresh",
  "search",
]);

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
    if (isPageTool(call.name)) {
      const res = await toContent(tab, { kind: "tool", name: call.name, args: call.args, target: call.target });
      if (!res.ok) throw new ToolFailure(res.code ?? "TOOL_FAILED", res.error);
      message = res.message ?? "Done";
      data = res.data;
      observation = res.observation;
    } else if (isTabTool(call.name)) {
      const r = await runTabTool(tab, call.name, call.args, call.input, share);
      tab = r.tabId;
      message = r.message;
      observation = r.observation;
    } else {
      throw new ToolFailure("NOT_A_BROWSER_TOOL", `${call.name} is not a tool Laika can run in the browser`);
    }
    if (MUTATING_TOOLS.has(call.name)) {
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
