import { describe, expect, it, vi } from "vitest";
import { shareMessage, shareRequest } from "../src/shared/share";

// The background module reaches for the browser API when it loads.
const tabs = { create: vi.fn(), remove: vi.fn(), get: vi.fn() };
vi.stubGlobal("chrome", { tabs });
const { runTabTool } = await import("../src/background/tools");

const prepared = { artifactId: "a-1", filename: "Trains.md", mime: "text/markdown", content: "# Trains\n", target: "file", message: "Exporting" };

describe("artifact.share in the extension", () => {
  it("accepts only a plain file name, a known type and a known target", () => {
    expect(shareRequest(prepared)).toEqual({ filename: "Trains.md", mime: "text/markdown", content: "# Trains\n", target: "file" });
    for (const bad of [
      { ...prepared, filename: "../x.md" },
      { ...prepared, filename: "a\\b.md" },
      { ...prepared, filename: ".bashrc" },
      { ...prepared, filename: "a\u0000.md" },
      { ...prepared, filename: " " },
      { ...prepared, mime: "text/html" },
      { ...prepared, target: "share_sheet" },
      { ...prepared, content: 5 },
      null,
      "Trains.md",
    ]) {
      expect(shareRequest(bad)).toBeNull();
    }
  });

  it("hands the host's export to the sidebar and reports what it did", async () => {
    const asked: unknown[] = [];
    const done = await runTabTool(3, "artifact.share", { artifactId: "a-1", format: "markdown" }, { ...prepared, target: "clipboard" }, async (req) => {
      asked.push(req);
      return shareMessage(req);
    });
    expect(asked).toEqual([{ filename: "Trains.md", mime: "text/markdown", content: "# Trains\n", target: "clipboard" }]);
    expect(done).toEqual({ tabId: 3, message: "Copied Trains.md (9 characters) to the clipboard" });
    expect(tabs.create).not.toHaveBeenCalled();
  });

  it("refuses an export it cannot check, and a refresh without a web URL, without opening anything", async () => {
    const never = async () => {
      throw new Error("not asked");
    };
    await expect(runTabTool(3, "artifact.share", {}, { ...prepared, filename: "/etc/passwd" }, never)).rejects.toMatchObject({ code: "INVALID_EXPORT" });
    await expect(runTabTool(3, "source.refresh", { sourceId: "s-1" }, { url: "javascript:alert(1)" }, never)).rejects.toMatchObject({ code: "INVALID_URL" });
    await expect(runTabTool(3, "source.refresh", { sourceId: "s-1" }, undefined, never)).rejects.toMatchObject({ code: "INVALID_URL" });
    expect(tabs.create).not.toHaveBeenCalled();
  });
});
