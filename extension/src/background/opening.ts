/**
 * Opening the sidebar: the toolbar button, the keyboard shortcuts and the
 * context menu, each maybe with a command for the sidebar (summarize, ask
 * about the selection).
 */
import { ext } from "../shared/api.js";
import { selectionIn } from "./context.js";
import type { SidebarCommand } from "./sidebars.js";

/** The shortcut slot a "run-prompt-N" command names (build.mjs declares them), else null. */
export function promptSlot(command: string): number | null {
  const m = /^run-prompt-([1-9])$/.exec(command);
  return m ? Number(m[1]) : null;
}

type FirefoxSidebar = { sidebarAction?: { open(): Promise<void> } };

async function openSidebar(tab: chrome.tabs.Tab | undefined): Promise<void> {
  const ff = ext as unknown as FirefoxSidebar;
  if (ff.sidebarAction) {
    await ff.sidebarAction.open();
    return;
  }
  if (ext.sidePanel && tab?.windowId !== undefined) await ext.sidePanel.open({ windowId: tab.windowId });
}

/** Registers the ways to open the sidebar; `deliver` hands it a command. */
export function wireOpening(deliver: (cmd: SidebarCommand) => void): void {
  const command = (cmd: SidebarCommand, tab: chrome.tabs.Tab | undefined): void => {
    deliver(cmd);
    void openSidebar(tab).catch((e: unknown) => console.warn("Laika: could not open the sidebar:", e));
  };

  /**
   * Asks about the selection in `tab`. The sidebar opens at once (the user
   * gesture does not survive a wait); the text is the page's own selection
   * (it keeps line breaks), else the menu's.
   */
  const askSelection = (tab: chrome.tabs.Tab | undefined, menuText?: string): void => {
    void openSidebar(tab).catch((e: unknown) => console.warn("Laika: could not open the sidebar:", e));
    const read = tab?.id === undefined ? Promise.resolve("") : selectionIn(tab.id);
    void read.then((text) => deliver({ kind: "command", action: "ask-selection", text: text || menuText || "" }));
  };

  ext.runtime.onInstalled.addListener(() => {
    ext.contextMenus.create({ id: "laika-summarize", title: "Summarize this page with Laika", contexts: ["page"] });
    ext.contextMenus.create({ id: "laika-ask-selection", title: "Ask Laika about “%s”", contexts: ["selection"] });
    ext.contextMenus.create({ id: "laika-open", title: "Open Laika", contexts: ["page", "link", "selection"] });
  });

  ext.contextMenus.onClicked.addListener((info, tab) => {
    if (info.menuItemId === "laika-summarize") command({ kind: "command", action: "summarize" }, tab);
    else if (info.menuItemId === "laika-ask-selection") askSelection(tab, info.selectionText);
    else if (info.menuItemId === "laika-open") void openSidebar(tab).catch(() => undefined);
  });

  ext.commands.onCommand.addListener((name, tab) => {
    if (name === "open-sidebar") void openSidebar(tab).catch(() => undefined);
    else if (name === "ask-selection") askSelection(tab);
    else {
      const slot = promptSlot(name);
      if (slot !== null) command({ kind: "command", action: "run-prompt", slot }, tab);
    }
  });

  if (ext.sidePanel?.setPanelBehavior) {
    void ext.sidePanel.setPanelBehavior({ openPanelOnActionClick: true }).catch(() => undefined);
  } else {
    ext.action?.onClicked.addListener((tab) => void openSidebar(tab).catch(() => undefined));
  }
}
