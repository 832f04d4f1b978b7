import { defineConfig } from "vitest/config"

// One Chromium and one Core at a time on 2 cores, as apps/e2e does: the UI files each launch both, and the
// 10,000-event monitor case needs the machine to itself to stay within its time.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    fileParallelism: false,
    pool: "forks"
  }
})
