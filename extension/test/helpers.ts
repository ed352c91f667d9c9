import fs from "node:fs";
import path from "node:path";
import { JSDOM } from "jsdom";

export function fixture(name: string, url = "https://news.example.com/story/1"): Document {
  const html = fs.readFileSync(path.join(__dirname, "fixtures", name), "utf8");
  return new JSDOM(html, { url }).window.document;
}

export function htmlDoc(html: string, url = "https://example.com/page"): Document {
  return new JSDOM(html, { url }).window.document;
}
