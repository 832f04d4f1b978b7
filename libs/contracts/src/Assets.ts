/**
 * Assets: files a page and an agent share through the session's `.pedelec-runtime/assets/`. Control messages take
 * the normal path; bodies go over Core's loopback HTTP server with a single-use ticket, which only the SDK sees.
 */
import * as Schema from "effect/Schema"
import { SessionId } from "./Ids.ts"

export const ASSET_LIMITS = {
  maxUploadBytes: 100 * 1024 * 1024,
  ticketTtlMs: 5 * 60_000,
  maxPathLength: 1024
} as const

/** Relative, `/`-separated, no empty, `.` or `..` segment, no drive letter, backslash or control character. */
export const AssetPath = Schema.String.check(
  Schema.isBetweenLength(1, ASSET_LIMITS.maxPathLength),
  Schema.isPattern(/^(?!\/)(?![A-Za-z]:)(?!.*\/\/)(?!.*\/$)(?!(.*\/)?\.\.?(\/|$))[^\\\p{Cc}]+$/u, {
    message: "Expected a relative path without `..`, `.`, empty segments, a drive letter or backslashes"
  })
).pipe(Schema.brand("AssetPath"))
export type AssetPath = typeof AssetPath.Type

export const AssetInfo = Schema.Struct({
  path: AssetPath,
  bytes: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  contentType: Schema.String.check(Schema.isMaxLength(256)),
  modifiedAt: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
})
export type AssetInfo = typeof AssetInfo.Type

export const ReadAssetAs = Schema.Literals(["text", "json", "file"])
export type ReadAssetAs = typeof ReadAssetAs.Type

export const UploadTicketRequest = Schema.Struct({
  sessionId: SessionId,
  path: AssetPath,
  bytes: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: ASSET_LIMITS.maxUploadBytes })),
  contentType: Schema.String.check(Schema.isMaxLength(256))
})
export type UploadTicketRequest = typeof UploadTicketRequest.Type

export const DownloadTicketRequest = Schema.Struct({ sessionId: SessionId, path: AssetPath })
export type DownloadTicketRequest = typeof DownloadTicketRequest.Type

/** Single use, 256-bit token, expires after `ticketTtlMs`. The URL is always on 127.0.0.1. */
export const AssetTicket = Schema.Struct({
  method: Schema.Literals(["PUT", "GET"]),
  url: Schema.String.check(Schema.isPattern(/^http:\/\/127\.0\.0\.1:\d{1,5}\/[^\s]*$/)),
  token: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{43,128}$/)),
  path: AssetPath,
  expiresAt: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
})
export type AssetTicket = typeof AssetTicket.Type
