/**
 * Digest — canonical JSON (every object's keys sorted, undefined left out) and its SHA-256 in hex: what an approval
 * is bound to, so the same manifest or the same tool call always hashes the same however it was written. Pure; what
 * is hashed is the caller's (Manifest, confirm/Confirmations).
 */

export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).filter(([, item]) => item !== undefined)
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`
  }
  return JSON.stringify(value)
}

export const sha256Hex = async (text: string): Promise<string> => {
  const bytes = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)))
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")
}
