/**
 * confirm/ConfirmState — what the confirmation of destructive tool calls keeps in `chrome.storage.session`, so a
 * worker restart forgets nothing and the window (which reads its call from here) keeps working: per session the
 * tools that need a person's yes (their title and description, from the manifest the user approved), per session the
 * tools allowed for the rest of it, and each call waiting on its window. Schemas and storage only; deciding is
 * Confirmations'.
 */
import type { Skills } from "@pedelec/contracts/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { ChromeApi } from "../browser/Chrome.ts"

const KEY = "confirmations"

export const ConfirmTool = Schema.Struct({ title: Schema.optionalKey(Schema.String), description: Schema.String })
export type ConfirmTool = typeof ConfirmTool.Type

export const Decision = Schema.Literals(["once", "session", "deny"])
export type Decision = typeof Decision.Type

/** A call held from the page until the user answers its window. `decided` waits for a page to re-attach. */
export const PendingCall = Schema.Struct({
  ticket: Schema.String,
  origin: Schema.String,
  sessionId: Schema.String,
  toolCallId: Schema.String,
  tool: Schema.String,
  title: Schema.optionalKey(Schema.String),
  description: Schema.String,
  args: Schema.Json,
  hash: Schema.String,
  windowId: Schema.optionalKey(Schema.Number),
  decided: Schema.optionalKey(Decision)
})
export type PendingCall = typeof PendingCall.Type

export const ConfirmDocument = Schema.Struct({
  tools: Schema.Record(Schema.String, Schema.Record(Schema.String, ConfirmTool)),
  allowed: Schema.Record(Schema.String, Schema.Array(Schema.String)),
  pending: Schema.Record(Schema.String, PendingCall)
})
/** The document as the worker holds and changes it. */
export interface ConfirmDocument {
  readonly tools: Record<string, Readonly<Record<string, ConfirmTool>>>
  readonly allowed: Record<string, ReadonlyArray<string>>
  readonly pending: Record<string, PendingCall>
}

const empty = (): ConfirmDocument => ({ tools: {}, allowed: {}, pending: {} })

/** The stored document; one that does not decode (an older worker's) counts as empty: nothing is allowed by it. */
export const readConfirmations = (chrome: ChromeApi) =>
  Effect.promise(() => chrome.session.get(KEY)).pipe(
    Effect.map((stored) => Schema.decodeUnknownOption(ConfirmDocument)(stored[KEY])),
    Effect.map(
      (decoded): ConfirmDocument =>
        decoded._tag === "Some"
          ? {
              tools: { ...decoded.value.tools },
              allowed: { ...decoded.value.allowed },
              pending: { ...decoded.value.pending }
            }
          : empty()
    )
  )

export const writeConfirmations = (chrome: ChromeApi, document: ConfirmDocument) =>
  Effect.promise(() => chrome.session.set({ [KEY]: document }))

/** The pending call a window shows, by its ticket: what confirm.html reads. */
export const pendingCallOf = async (ticket: string): Promise<PendingCall | undefined> => {
  const stored = (await chrome.storage.session.get(KEY))[KEY]
  const decoded = Schema.decodeUnknownOption(ConfirmDocument)(stored)
  return decoded._tag === "Some" ? decoded.value.pending[ticket] : undefined
}

/** A tool asks a person before each run when the page marks it destructive or as requiring confirmation. */
export const confirmToolsOf = (skills: Skills | undefined): Record<string, ConfirmTool> => {
  const tools: Record<string, ConfirmTool> = {}
  for (const tool of skills?.tools ?? []) {
    const annotations: Readonly<Record<string, unknown>> = tool.annotations ?? {}
    if (annotations.destructive !== true && annotations.requiresConfirmation !== true) continue
    const title = typeof annotations.title === "string" ? annotations.title : undefined
    tools[tool.name] = { description: tool.description, ...(title === undefined ? {} : { title }) }
  }
  return tools
}
