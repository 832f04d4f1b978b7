/**
 * Assets — a session's files, moved by the SDK itself: it asks Core for a single-use ticket through the extension,
 * then PUTs or GETs the body on Core's loopback asset server with fetch, so no body crosses native messaging and page
 * code never sees a port, token or URL. Owns the transfer, what a refusal or a blocked request means, and decoding
 * what was read. Tickets, paths on disk and the server's rules are Core's.
 */
import {
  ASSET_LIMITS,
  ASSET_TICKET_HEADER,
  type AssetInfo,
  AssetPath,
  type AssetTicket,
  type ReadAssetAs
} from "@pedelec/contracts/Assets"
import { ErrorCode } from "@pedelec/contracts/ErrorCode"
import type { SessionId } from "@pedelec/contracts/Ids"
import { type ErrorDetails, PedelecError } from "@pedelec/contracts/PedelecError"
import * as Schema from "effect/Schema"
import type { ExtensionLink } from "../page/ExtensionLink.ts"

const isAssetPath = Schema.is(AssetPath)
const isErrorCode = Schema.is(ErrorCode)
const fail = (code: ErrorCode, details: ErrorDetails) => PedelecError.fromCode(code, "sdk", { details })

/** The earlier SDK wrote asset paths as `/a/b.txt`; both spellings name the same file. */
export const assetPathOf = (path: unknown): AssetPath => {
  const relative = typeof path === "string" ? path.replace(/^\//, "") : path
  if (isAssetPath(relative)) return relative
  throw fail("ASSET_PATH_INVALID", { path: String(path), reason: "use a relative path such as `img/a.png`" })
}

/** One request on the ticket; a refusal from Core's server keeps Core's code and words. */
const transfer = async (ticket: AssetTicket, body: Blob | null = null): Promise<Response> => {
  const response = await fetch(ticket.url, {
    method: ticket.method,
    headers: { [ASSET_TICKET_HEADER]: ticket.token },
    body,
    credentials: "omit"
  }).catch((error: unknown) => {
    // Chrome's Local Network Access prompt, a denial of it, or Core gone: fetch only says "Failed to fetch".
    throw fail("ASSET_TRANSFER_FAILED", { reason: `the local runtime could not be reached (${error})` })
  })
  if (response.ok) return response
  const said: { code?: unknown; message?: unknown } = await response.json().catch(() => ({}))
  throw isErrorCode(said.code)
    ? PedelecError.fromCode(said.code, "core", { message: String(said.message) })
    : fail("ASSET_TRANSFER_FAILED", { reason: `the local runtime answered HTTP ${response.status}` })
}

/** A listed asset: Core's `AssetInfo`, with the earlier SDK's `name` (the file name) and `sizeBytes` (= `bytes`). */
export interface SandboxAsset extends AssetInfo {
  readonly name: string
  readonly sizeBytes: number
}

export const listAssets = async (link: ExtensionLink, sessionId: SessionId): Promise<ReadonlyArray<SandboxAsset>> =>
  (await link.request("asset.list", { sessionId })).map((asset) => ({
    ...asset,
    name: asset.path.slice(asset.path.lastIndexOf("/") + 1),
    sizeBytes: asset.bytes
  }))

export const uploadAsset = async (link: ExtensionLink, sessionId: SessionId, file: File, target?: string) => {
  const path = assetPathOf(target ?? file.name)
  if (file.size > ASSET_LIMITS.maxUploadBytes)
    throw fail("ASSET_TOO_LARGE", { path, bytes: file.size, limit: ASSET_LIMITS.maxUploadBytes })
  const contentType = file.type.slice(0, 256)
  const ticket = await link.request("asset.upload_ticket", { sessionId, path, bytes: file.size, contentType })
  await transfer(ticket, file)
  return ticket.path
}

export const readAsset = async (link: ExtensionLink, sessionId: SessionId, path: string, as: ReadAssetAs) => {
  const asset = assetPathOf(path)
  const response = await transfer(await link.request("asset.download_ticket", { sessionId, path: asset }))
  if (as === "file") {
    const lastModified = Date.parse(response.headers.get("last-modified") ?? "") || Date.now()
    const type = response.headers.get("content-type") ?? ""
    return new File([await response.blob()], asset.slice(asset.lastIndexOf("/") + 1), { type, lastModified })
  }
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(await response.arrayBuffer())
    return as === "json" ? (JSON.parse(text) as unknown) : text
  } catch {
    throw fail("ASSET_DECODE_FAILED", { path: asset, as })
  }
}
