import { defineConfig } from "vitest/config"

// One file at a time on 2 cores: most probes drive real processes (Core, the native host, Chromium) and measure
// them, so files in parallel would fight over the CPU and skew each other's figures. The global setup collects the
// row every probe writes and prints the one summary table after the last file.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/summary.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    pool: "forks"
  }
})
