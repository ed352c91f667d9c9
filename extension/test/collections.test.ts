import { beforeAll, describe, expect, it, vi } from "vitest";
import type { RoutedHostMessage } from "../src/shared/protocol";
import type { SidebarHostRequest } from "../src/shared/messages";

type Module = typeof import("../src/sidebar/collections");
let mod: Module;

beforeAll(async () => {
  // The panel lists open tabs through the extension API.
  vi.stubGlobal("chrome", {
    tabs: {
      query: async () => [
        { id: 4, url: "https://a.example/one", title: "One" },
        { id: 5, url: "chrome://settings", title: "Settings" },
      ],
    },
  });
  mod = await import("../src/sidebar/collections");
});

const list: RoutedHostMessage = {
  type: "collections.list.result", id: "r", reply_to: "q",
  collections: [{ id: "col-1", title: "Trains", tags: [], created_at: "t", source_count: 3 }],
  artifacts: [{ id: "a-1", title: "Comparison: Trains", mime: "application/vnd.laika.render+json", collection_id: "col-1", created_at: "t" }],
} as RoutedHostMessage;

describe("the collections panel", () => {
  it("lists collections, web tabs and artifacts, and answers over the chosen collection", async () => {
    const asked: SidebarHostRequest[] = [];
    const panel = new mod.CollectionsPanel({
      request: async (req) => {
        asked.push(req);
        return list;
      },
      addPage: async () => list,
    });
    document.body.append(panel.el);
    await panel.refresh();
    const options = [...panel.el.querySelectorAll<HTMLOptionElement>("#collection-select option")].map((o) => o.textContent);
    expect(options).toEqual(["This page", "Trains (3)"]);
    expect(panel.selected()).toBeNull();
    const tabs = [...panel.el.querySelectorAll<HTMLOptionElement>("#collection-tabs option")].map((o) => o.value);
    expect(tabs).toEqual(["4"]);
    expect(panel.el.querySelector("#artifact-list li span")?.textContent).toBe("Comparison: Trains");
    (panel.el.querySelector("#collection-select") as HTMLSelectElement).value = "col-1";
    expect(panel.selected()).toBe("col-1");
    expect(asked).toEqual([{ type: "collections.list" }]);
  });
});
