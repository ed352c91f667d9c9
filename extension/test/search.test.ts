import { describe, expect, it, vi } from "vitest";

// The background module reaches for the browser API when it loads.
vi.stubGlobal("chrome", {});
const { searchUrl } = await import("../src/background/tools");

describe("search URL", () => {
  it("uses a known engine and defaults to DuckDuckGo only when none is named", () => {
    expect(searchUrl({ query: "night trains" })).toBe("https://duckduckgo.com/?q=night%20trains");
    expect(searchUrl({ query: "x", engine: "Bing" })).toBe("https://www.bing.com/search?q=x");
  });

  it("refuses an unknown engine instead of replacing it", () => {
    for (const engine of ["evil-search", "https://evil.example/?q=", "", "__proto__", "constructor", 5]) {
      expect(searchUrl({ query: "x", engine })).toBeNull();
    }
  });
});
