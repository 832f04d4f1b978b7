/**
 * `PedelecError`: the one error every layer raises and every page sees, narrowed by `code`; and its wire form
 * `{code, message, details?, retryable, source}`. What a code means lives in the catalog (ErrorCode.ts); this module
 * only builds, narrows and (de)serialises errors.
 */
import * as Schema from "effect/Schema"
import { CATALOG } from "#error-catalog"
import { ErrorCode } from "./ErrorCode.ts"
import { Component } from "./Protocol.ts"

/** Structured facts about an error (ids, paths, limits). JSON only, so it survives every hop. */
export const ErrorDetails = Schema.Record(Schema.String, Schema.Json)
export type ErrorDetails = typeof ErrorDetails.Type

const MessageText = Schema.String.check(Schema.isMaxLength(8192))

/** The error as it travels between components. */
export const PedelecErrorWire = Schema.Struct({
  code: ErrorCode,
  message: MessageText,
  details: Schema.optionalKey(ErrorDetails),
  retryable: Schema.Boolean,
  source: Component
})
export type PedelecErrorWire = typeof PedelecErrorWire.Type

export class PedelecError extends Schema.TaggedError<PedelecError>()("PedelecError", {
  code: ErrorCode,
  message: MessageText,
  details: Schema.optionalKey(ErrorDetails),
  retryable: Schema.Boolean,
  source: Component
}) {
  /** Builds an error from the catalog; `message` overrides the template only when the raiser knows better. */
  static fromCode<C extends ErrorCode>(
    code: C,
    source: Component,
    options: { readonly details?: ErrorDetails; readonly message?: string } = {}
  ): PedelecErrorOf<C> {
    const entry = CATALOG[code]
    // Only a browser bundle lacks specs, and only for codes browsers never raise: a test keeps `raisedBy` honest.
    const message = options.message ?? formatMessage(entry?.message ?? `Pedelec reported ${code}.`, options.details)
    return new PedelecError({
      code,
      message,
      retryable: entry?.retryable ?? false,
      source,
      ...(options.details === undefined ? {} : { details: options.details })
    }) as PedelecErrorOf<C>
  }

  static fromWire(wire: PedelecErrorWire): PedelecError {
    return new PedelecError(wire)
  }

  toWire(): PedelecErrorWire {
    const { code, message, details, retryable, source } = this
    return details === undefined ? { code, message, retryable, source } : { code, message, details, retryable, source }
  }
}

/** A `PedelecError` whose `code` is known to be one of `C`. */
export type PedelecErrorOf<C extends ErrorCode> = PedelecError & { readonly code: C }

export const isPedelecError = (u: unknown): u is PedelecError => u instanceof PedelecError

/** Narrows an unknown failure to a `PedelecError` with one of the given codes. */
export const hasCode = <const C extends ErrorCode>(u: unknown, ...codes: ReadonlyArray<C>): u is PedelecErrorOf<C> =>
  isPedelecError(u) && (codes as ReadonlyArray<ErrorCode>).includes(u.code)

const placeholder = /\{([A-Za-z][A-Za-z0-9]*)\}/g

/** Fills `{name}` from details; a missing value reads as a neutral phrase rather than a raw placeholder. */
export const formatMessage = (template: string, details: ErrorDetails | undefined): string =>
  template.replace(placeholder, (_, name: string, offset: number) => {
    const value = details !== undefined && Object.hasOwn(details, name) ? details[name] : undefined
    if (value === undefined || value === null) return unknownPhrase(name)
    const text = typeof value === "string" ? value : JSON.stringify(value)
    // A reason written as a sentence must not end in ".." where the template adds its own full stop.
    const closesSentence = template[offset + name.length + 2] === "."
    return closesSentence ? text.replace(/\.+$/, "") : text
  })

const unknownPhrase = (name: string): string => {
  switch (name) {
    case "reason":
      return "no reason was given"
    case "tool":
      return "the tool"
    case "provider":
      return "the provider"
    case "sessionId":
      return "(unknown)"
    default:
      return `(${name} unknown)`
  }
}
