import { describe, expect, it } from "vitest";
import type { ConversationDetail, SavedPrompt } from "../src/generated/wire";
import { conversationMarkdown } from "../src/sidebar/history";

const conv = {
  id: "c1",
  title: "Night trains",
  page_url: "https://rail.example/",
  turns: [{ user_text: "Summarize this page", render: null, answer_text: "Trains leave at nine.", status: "ok", citations: [] }],
} as unknown as ConversationDetail;

const prompts: SavedPrompt[] = [
  { id: "p1", name: "What's the catch?", text: "What is the catch\nhere?", task: "web.answer", key: 3, updated_at: "t" },
  { id: "p2", name: "TL;DR", text: "Three bullets.", task: "web.summarize", key: null, updated_at: "t" },
];

describe("the Markdown export of a conversation", () => {
  it("lists the saved prompts after the turns, with their task and shortcut", () => {
    const md = conversationMarkdown(conv, prompts);
    expect(md).toContain("## Summarize this page\n\nTrains leave at nine.");
    expect(md.endsWith("## Saved prompts\n\n- **What's the catch?** (Question · shortcut 3): What is the catch here?\n- **TL;DR** (Summary): Three bullets.\n")).toBe(true);
  });

  it("has no prompts section when none are saved", () => {
    expect(conversationMarkdown(conv)).not.toContain("Saved prompts");
  });
});
