import { defineConfig } from "vitest/config";

export default defineConfig({
  define: { __LAIKA_BROWSER__: JSON.stringify("chromium") },
  test: { environment: "jsdom", include: ["test/**/*.test.ts"], testTimeout: 30_000 },
});
