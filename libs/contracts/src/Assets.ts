/**
 * Assets: files a page and an agent share through the session's `.pedelec-runtime/assets/`. Control messages take
 * the normal path; bodies go over Core's loopback HTTP server with a single-use ticket, which only the SDK sees.
 */
import * as Schema from "effect/Schema"
import type { ErrorCode } from "./ErrorCode.ts"
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
  /** The page's own idea of the type; Core serves and lists a file with the type of its extension. */
  contentType: Schema.String.check(Schema.isMaxLength(256))
})
export type UploadTicketRequest = typeof UploadTicketRequest.Type

export const DownloadTicketRequest = Schema.Struct({ sessionId: SessionId, path: AssetPath })
export type DownloadTicketRequest = typeof DownloadTicketRequest.Type

/**
 * Single use, 256-bit token, expires after `ticketTtlMs`. The URL is always on 127.0.0.1. The SDK sends `method` to
 * `url` with `token` in the `ASSET_TICKET_HEADER` request header (never in the URL), from the session's page: the
 * server refuses any other `Origin` and any `Host` but the URL's own.
 */
export const AssetTicket = Schema.Struct({
  method: Schema.Literals(["PUT", "GET"]),
  url: Schema.String.check(Schema.isPattern(/^http:\/\/127\.0\.0\.1:\d{1,5}\/[^\s]*$/)),
  token: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{43,128}$/)),
  path: AssetPath,
  expiresAt: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
})
export type AssetTicket = typeof AssetTicket.Type

/**
 * The asset server's wire beside the ticket (SPEC §8). A request carries the token in this header: a navigation or a
 * form cannot send it, and it never shows up in a URL or a log line. Browsers preflight it (a custom header, and PUT).
 */
export const ASSET_TICKET_HEADER = "x-pedelec-ticket"

/**
 * What the asset server answers. PUT: `201` with the stored file's `AssetInfo` as JSON. GET: `200` with the bytes,
 * `Content-Type` from the file's extension, `Content-Length` and `Last-Modified`. A refusal: a 4xx/5xx status with
 * `AssetRefusal` as JSON (readable by the page only when its origin is the session's; otherwise the browser reports a
 * network error).
 */
export interface AssetRefusal {
  readonly code: ErrorCode
  /** The catalog message with its details filled in, ready for a user. */
  readonly message: string
}
