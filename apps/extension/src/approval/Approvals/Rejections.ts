/**
 * Approvals/Rejections — what the user turned down, remembered for REJECTION_MEMORY_MS in `chrome.storage.session`,
 * so a worker restart does not forget it: a rejected origin is refused outright, a rejected path or manifest only for
 * that origin with that path and manifest (another manifest asks again). Whether to ask at all is Approvals'.
 */
import type { Origin } from "@pedelec/contracts/Ids"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { ChromeApi } from "../../browser/Chrome.ts"
import { REJECTION_MEMORY_MS } from "../ApprovalTimings.ts"
import type { ApprovalAsk } from "./ApprovalWindow.ts"

const REJECTIONS_KEY = "rejections"
const Rejections = Schema.Record(Schema.String, Schema.Number)

export const rejectionKey = (ask: ApprovalAsk): string =>
  ask.askOrigin
    ? ask.origin
    : `${ask.origin} ${ask.path ?? ""}${ask.manifest === undefined ? "" : ` ${ask.manifest.approved.digest}`}`

export const rejected = (origin: Origin, until: number) =>
  PedelecError.fromCode("APPROVAL_REJECTED", "extension", { details: { origin, retryAfter: until } })

/** Until when each key is refused; a stored value that does not decode counts as none. */
export const readRejections = (chrome: ChromeApi) =>
  Effect.promise(() => chrome.session.get(REJECTIONS_KEY)).pipe(
    Effect.map((stored) => Schema.decodeUnknownOption(Rejections)(stored[REJECTIONS_KEY])),
    Effect.map((decoded) => (decoded._tag === "Some" ? decoded.value : {}))
  )

/** Refuses `key` until `until`, dropping the rejections that have run out. */
export const remember = (chrome: ChromeApi, key: string, until: number) =>
  Effect.flatMap(readRejections(chrome), (rejections) => {
    const now = until - REJECTION_MEMORY_MS
    const kept = Object.fromEntries(Object.entries(rejections).filter(([, at]) => at > now))
    return Effect.promise(() => chrome.session.set({ [REJECTIONS_KEY]: { ...kept, [key]: until } }))
  })
