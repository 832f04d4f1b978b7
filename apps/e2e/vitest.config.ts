import { defineConfig } from "vitest/config"

// One Chromium at a time on 2 cores; each file launches its own and reuses it across its cases.
export default defineConfig({
  test: {
    include: ["test/**/*.e2e.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    fileParallelism: false,
    pool: "forks"
  }
})
