import { describe, expect, it } from "vitest";
import { highlight } from "../src/content/tools";
import { quoteRange } from "../src/content/quote-range";
import { HandleRegistry } from "../src/content/handles";
import { htmlDoc } from "./helpers";

describe("the quoted words on the page", () => {
  const article = htmlDoc(
    "<article>Night trains are back. The sleeper to <b>Vienna</b>\n   leaves at nine every evening from the main station. Tickets cost <i>€49</i>.<script>var x = 'leaves at nine';</script></article>",
  );
  const root = article.querySelector("article") as Element;

  it("finds a sentence inside one big block, across markup and line breaks", () => {
    const r = quoteRange(root, "The sleeper to Vienna leaves at nine every evening from the main station.");
    expect(r?.toString().replace(/\s+/g, " ")).toBe("The sleeper to Vienna leaves at nine every evening from the main station.");
    expect(quoteRange(root, "tickets COST €49")?.toString()).toBe("Tickets cost €49");
  });

  it("matches a long quote from its first words to its last, and nothing that is not there", () => {
    const long = `Night trains are back. The sleeper to Vienna leaves at nine every evening from the main station. Tickets cost €49.`;
    const shifted = long.replace("every evening", "each evening");
    expect(quoteRange(root, shifted)?.toString().replace(/\s+/g, " ")).toBe(long);
    expect(quoteRange(root, "The ferry to Oslo")).toBeNull();
    expect(quoteRange(root, "   ")).toBeNull();
  });

  it("selects the quoted words, not the whole article, when a citation is shown", () => {
    const doc = htmlDoc("<main><article>Night trains are back. The sleeper to Vienna leaves at nine every evening. Tickets cost €49.</article></main>");
    expect(highlight(doc, new HandleRegistry(), undefined, "The sleeper to Vienna leaves at nine every evening.")).toMatchObject({ ok: true });
    expect(doc.getSelection()?.toString()).toBe("The sleeper to Vienna leaves at nine every evening.");
    expect((doc.querySelector("[data-laika-highlighted]") as HTMLElement).style.outline).toBe("");
  });
});
