import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { afterEach, beforeEach } from "vitest"
import { hasCode, PedelecClient, scoped, sendText } from "../src/effect.ts"
import { FakeExtension, uninstall, wireError } from "./FakeExtension.ts"

let chrome: FakeExtension
beforeEach(() => {
  chrome = new FakeExtension().install()
})
afterEach(uninstall)

describe("@pedelec/sdk/effect", () => {
  it.effect("fails with PedelecError, narrowed by code, and ends a scoped session with its scope", () =>
    Effect.gen(function* () {
      chrome.on("session.send_text", () => ({ error: wireError("SESSION_BUSY") }))
      chrome.on("session.end", () => ({ result: {} }))
      const client = yield* PedelecClient
      const outcome = yield* Effect.scoped(
        Effect.gen(function* () {
          const session = yield* scoped(client.createSession())
          return yield* sendText(session, "hi").pipe(
            Effect.catchIf(
              (error) => hasCode(error, "SESSION_BUSY"),
              (error) => Effect.succeed(`busy: ${error.code}`)
            )
          )
        })
      )
      assert.strictEqual(outcome, "busy: SESSION_BUSY")
      assert.strictEqual(chrome.requests("session.end").length, 1)
    }).pipe(Effect.provide(PedelecClient.layer()))
  )

  it.effect("closes the port when the layer's scope closes", () =>
    Effect.gen(function* () {
      const status = { installed: true, approved: true, origin: "http://127.0.0.1:5173", appConnected: true }
      chrome.on("extension.approval_status", () => ({ result: status }))
      yield* Effect.scoped(
        Effect.gen(function* () {
          const client = yield* PedelecClient
          yield* client.getApprovalStatus
        }).pipe(Effect.provide(PedelecClient.layer()))
      )
      assert.strictEqual(chrome.port.connected, false)
    })
  )
})
