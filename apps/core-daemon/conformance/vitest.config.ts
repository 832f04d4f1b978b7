// The live provider conformance suite: the real built Core driving real agent CLIs (installed at pinned versions by
// the global setup) against the scripted model server. Separate from `test` because it installs hundreds of MB once.
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["conformance/**/*.test.ts"],
    globalSetup: ["conformance/global-setup.ts"],
    testTimeout: 90_000,
    hookTimeout: 180_000,
    fileParallelism: false
  }
})
