// Mint's ids and secrets from its pooled CSPRNG bytes: every kind has its length and alphabet, none repeats across
// many refills of the 4 KiB pool (ids of mixed sizes, so some straddle a refill), and consecutive secrets share no
// bytes: a page that sees its tool-call ids learns nothing of the capability minted next.
import { describe, expect, it } from "vitest"
import { mintCapability, mintLaunchSecret, mintSessionId, mintToolCallId, mintTurnId } from "../src/Mint.ts"

const BASE64URL = /^[A-Za-z0-9_-]+$/
const bytesOf = (text: string) => Buffer.from(text, "base64url")

describe("Mint", () => {
  it("mints each kind at its size, in base64url", () => {
    expect(bytesOf(mintSessionId())).toHaveLength(16)
    expect(bytesOf(mintTurnId())).toHaveLength(12)
    expect(bytesOf(mintToolCallId())).toHaveLength(12)
    expect(bytesOf(mintCapability())).toHaveLength(32)
    expect(bytesOf(mintLaunchSecret())).toHaveLength(32)
    for (const id of [mintSessionId(), mintToolCallId(), mintCapability()]) expect(id).toMatch(BASE64URL)
  })

  it("never repeats an id across many refills of its pool", () => {
    const seen = new Set<string>()
    const mints = [mintToolCallId, mintSessionId, mintCapability, mintTurnId]
    // 20,000 ids of 12–32 bytes: ~90 refills of a 4 KiB pool.
    for (let i = 0; i < 20_000; i++) seen.add(mints[i % mints.length]!())
    expect(seen.size).toBe(20_000)
  })

  it("hands each byte out once: consecutive secrets have no 8-byte run in common", () => {
    const runs = new Set<string>()
    for (let i = 0; i < 2_000; i++) {
      const bytes = bytesOf(mintCapability())
      for (let at = 0; at + 8 <= bytes.length; at += 8) runs.add(bytes.subarray(at, at + 8).toString("hex"))
    }
    expect(runs.size).toBe(2_000 * 4)
  })
})
