/**
 * The host link and Core IPC give each call one name: every host method but the two the extension answers is the tag
 * of a HostRpcs rpc, and the payload `corePayload` builds from any valid request is exactly what that rpc takes
 * (decoded strictly, so a field the host forgot to drop or to add fails here, not in Core). Each page result takes
 * what Core answers, and an rpc that answers nothing has the empty page result the host answers instead.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import type { LocalProvider } from "../src/Desktop.ts"
import { Origin } from "../src/Ids.ts"
import {
  type CoreCallMethod,
  corePayload,
  EXTENSION_ANSWERS,
  ExtensionMethods,
  type HostMethod,
  HostMethods
} from "../src/link/HostLink.ts"
import { PageMethods } from "../src/link/PageLink.ts"
import { HostRpcs } from "../src/node/CoreLink.ts"
import { type AnyCodec, rpcSuccess } from "./schemas.ts"

const RUNS = 30
const strict = { onExcessProperty: "error" } as const
const methods = Object.keys(HostMethods) as Array<HostMethod>
const extensionAnswers: ReadonlyArray<HostMethod> = EXTENSION_ANSWERS
const rpcOf = (method: HostMethod) => {
  const rpc = HostRpcs.requests.get(method)
  return rpc === undefined ? assert.fail(`${method} is not a HostRpcs tag`) : rpc
}

const assertAccepts = (schema: Schema.Top, value: unknown, what: string) => {
  const exit = Schema.decodeUnknownExit(schema as AnyCodec)(value, strict)
  if (Exit.isFailure(exit)) assert.fail(`${what}: ${String(Cause.squash(exit.cause))}`)
}

describe("host methods are Core RPC tags", () => {
  it("every method but the extension's own names a HostRpcs rpc", () => {
    assert.deepStrictEqual(
      methods.filter((method) => !HostRpcs.requests.has(method)),
      [...extensionAnswers]
    )
  })

  it("a page can name none of the extension's own methods (site policies, revocation, the session list)", () => {
    for (const method of Object.keys(ExtensionMethods)) assert.isFalse(Object.hasOwn(PageMethods, method), method)
    assert.isTrue(Object.hasOwn(ExtensionMethods, "origin.set_policy"))
  })

  it("the methods the extension answers are page methods the host never relays", () => {
    for (const method of extensionAnswers) assert.isTrue(Object.hasOwn(PageMethods, method), method)
  })
})

describe("the payload built from a request is the rpc's", () => {
  for (const method of methods.filter((method) => !extensionAnswers.includes(method))) {
    const { params } = HostMethods[method]
    it.prop(
      method,
      [params as AnyCodec, Origin],
      ([value, origin]) => {
        const pageOrigin = Object.hasOwn(ExtensionMethods, method) ? undefined : origin
        // `session.subscribe` is relayed as a stream, with the payload every other method gets by default.
        const payload =
          method === "session.subscribe"
            ? { origin, ...(value as object) }
            : corePayload(method as CoreCallMethod, pageOrigin as never, value as never)
        assertAccepts(Schema.toType(rpcOf(method).payloadSchema), payload, `${method}'s payload`)
      },
      { arbitrary: { runs: RUNS } }
    )
  }
})

describe("the page result takes what Core answers", () => {
  for (const method of methods.filter((method) => !extensionAnswers.includes(method))) {
    const success = rpcSuccess(rpcOf(method)) as AnyCodec
    const { result } = HostMethods[method]
    if (method === "session.subscribe" || success.ast._tag === "Void") {
      it(`${method} answers {}`, () => assertAccepts(result, {}, `${method}'s result`))
      continue
    }
    it.prop(
      method,
      [success],
      ([value]) => {
        const encoded = Schema.encodeUnknownExit(success)(value)
        if (Exit.isFailure(encoded)) return assert.fail(String(Cause.squash(encoded.cause)))
        assertAccepts(result, JSON.parse(JSON.stringify(encoded.value)), `${method}'s result`)
      },
      { arbitrary: { runs: RUNS } }
    )
  }
})

describe("what a page never learns", () => {
  it("a provider found on this machine reaches the host role without where it was found", () => {
    const found: LocalProvider = {
      code: "codex",
      name: "Codex CLI",
      available: true,
      version: "0.171.0",
      error: null,
      experimental: false,
      effort: { supported: true },
      location: "/home/someone/.local/bin/codex"
    }
    const listed = rpcSuccess(rpcOf("providers.list")) as AnyCodec
    const wire = JSON.stringify(Schema.encodeUnknownSync(listed)([found]))
    assert.notInclude(wire, "location")
    assert.notInclude(wire, "/home/someone")
  })
})
