/**
 * SelfTest — `npm start -- --self-test`: the whole chain, headless, with the scripted agent in a temp Pedelec home,
 * one hop at a time (extension reachable, origin approved, native host answered, Core answered, session created, a
 * turn with one tool call, an asset uploaded and read back, ended), each timed inside the page. Prints one line per
 * hop and, at the first failure, what to do about it. Resolves true when every hop passed; always cleans up.
 */

import { approving } from "@pedelec/chain/Browser"
import { type Chain, startChain } from "@pedelec/chain/Chain"
import type { Failure } from "@pedelec/chain/page/probe"
import { testPageRoutes } from "@pedelec/chain/TestPage"
import { script } from "@pedelec/providers/scripted/Script"
import type { Page } from "playwright-core"

/** What a hop's page side reports: how long the SDK call took and what it saw, or how it failed. */
type HopOutcome = { readonly ms: number; readonly detail: string } | { readonly failure: Failure }

interface Hop {
  readonly name: string
  readonly run: (chain: Chain, page: Page) => Promise<HopOutcome>
}

const TOOL_SCRIPT = script('call echo {"text":"self-test"}', "say self-test done")

const HOPS: ReadonlyArray<Hop> = [
  {
    name: "extension reachable",
    run: (chain, page) =>
      page.evaluate(async (extensionId) => {
        const started = performance.now()
        const status = await window.e2e.client(extensionId).getApprovalStatus()
        const ms = performance.now() - started
        return status.installed
          ? { ms, detail: `extension ${extensionId}` }
          : {
              failure: {
                code: "EXTENSION_UNAVAILABLE",
                message: "getApprovalStatus said not installed",
                details: status
              }
            }
      }, chain.extensionId)
  },
  {
    name: "origin approved (approval window)",
    run: async (chain, page) => {
      const started = Date.now()
      const { value: failure } = await approving(chain.context, chain.extensionId, () =>
        page.evaluate(async (extensionId) => {
          // The skills of the session below, so this one window approves the origin and what its agent is told.
          const creating = window.e2e.client(extensionId).createSession({ skills: window.e2e.skills })
          const failure = await window.e2e.failure(creating)
          if (failure === undefined) await (await creating).end()
          return failure
        }, chain.extensionId)
      )
      return failure !== undefined
        ? { failure }
        : { ms: Date.now() - started, detail: `${chain.origins.http} approved` }
    }
  },
  {
    name: "native host answered",
    run: (chain, page) =>
      page.evaluate(async (extensionId) => {
        const started = performance.now()
        const availability = await window.e2e.client(extensionId).checkAvailability()
        const ms = performance.now() - started
        if (availability.desktop.available) return { ms, detail: "extension ⇄ native host ⇄ Core" }
        const error = availability.error
        return {
          failure: {
            code: error?.code ?? "NATIVE_HOST_UNAVAILABLE",
            message: error?.message ?? "not available",
            details: error?.details
          }
        }
      }, chain.extensionId)
  },
  {
    name: "Core answered",
    run: (chain, page) =>
      page.evaluate(async (extensionId) => {
        const started = performance.now()
        const listing = window.e2e.client(extensionId).listProviders()
        const failure = await window.e2e.failure(listing)
        if (failure !== undefined) return { failure }
        const providers = await listing
        const available = providers.filter((provider) => provider.available).map((provider) => provider.code)
        return { ms: performance.now() - started, detail: `providers available: ${available.join(", ") || "none"}` }
      }, chain.extensionId)
  },
  {
    name: "session created",
    run: (chain, page) =>
      page.evaluate(async (extensionId) => {
        const started = performance.now()
        const creating = window.e2e.client(extensionId).createSession({ skills: window.e2e.skills })
        const failure = await window.e2e.failure(creating)
        if (failure !== undefined) return { failure }
        const session = await creating
        window.e2e.keep(session)
        return { ms: performance.now() - started, detail: `${session.provider}, session ${session.sessionId}` }
      }, chain.extensionId)
  },
  {
    name: "turn with one tool call",
    run: (_chain, page) =>
      page.evaluate(async (text) => {
        const [session] = [...window.e2e.sessions.values()].slice(-1)
        if (session === undefined) throw new Error("no session")
        session.onTool<{ readonly text: string }>("echo", ({ text }) => ({ echoed: text }))
        const started = performance.now()
        const turn = session.sendText(text)
        const failure = await window.e2e.failure(turn)
        if (failure !== undefined) return { failure }
        const result = await turn
        const ms = performance.now() - started
        const line = (window.e2e.records.get(session.sessionId) ?? []).find(
          (seen) => seen.kind === "chat" && seen.turnId === result.turnId && seen.text.startsWith("tool echo exit 0: ")
        )
        if (line === undefined) {
          return {
            failure: { code: "TOOL_CALL_LOST", message: "the agent never printed the tool's result", details: result }
          }
        }
        const toolMs = /\(([\d.]+) ms\)$/.exec(line.text)?.[1] ?? "?"
        return { ms, detail: `tool round trip ${toolMs} ms as the agent measured it` }
      }, TOOL_SCRIPT)
  },
  {
    name: "asset uploaded and read back",
    run: (_chain, page) =>
      page.evaluate(async () => {
        const [session] = [...window.e2e.sessions.values()].slice(-1)
        if (session === undefined) throw new Error("no session")
        const body = "x".repeat(1024 * 1024)
        const started = performance.now()
        const upload = session.uploadAsset(new File([body], "self-test.txt", { type: "text/plain" }))
        const failed = await window.e2e.failure(upload)
        if (failed !== undefined) return { failure: failed }
        const reading = session.readAsset(await upload, "text")
        const failure = await window.e2e.failure(reading)
        if (failure !== undefined) return { failure }
        const same = (await reading) === body
        const ms = performance.now() - started
        if (!same) return { failure: { code: "ASSET_CORRUPTED", message: "the file read back differs", details: null } }
        return { ms, detail: "1 MiB through Core's loopback asset server and back" }
      })
  },
  {
    name: "ended",
    run: (_chain, page) =>
      page.evaluate(async () => {
        const [session] = [...window.e2e.sessions.values()].slice(-1)
        if (session === undefined) throw new Error("no session")
        const started = performance.now()
        const ended = new Promise<void>((resolve) => session.onEnded(() => resolve()))
        const failure = await window.e2e.failure(session.end())
        if (failure !== undefined) return { failure }
        await ended
        return { ms: performance.now() - started, detail: `status ${session.getStatus()}` }
      })
  }
]

/** What to do when a hop fails, by the code it failed with. */
const advice = (code: string): string => {
  switch (code) {
    case "EXTENSION_UNAVAILABLE":
      return "Build the extension (npx nx run extension:build); Chromium must load apps/extension/dist."
    case "NATIVE_HOST_UNAVAILABLE":
      return "The native host did not start: build it (npx nx run native-host:build) and read its log below."
    case "CORE_RUNTIME_UNAVAILABLE":
      return "The native host could not reach Core: build it (npx nx run core-daemon:build) and read Core's stderr below."
    case "PROVIDER_START_FAILED":
      return "The scripted agent did not start: build it (npx nx run providers:build)."
    case "ASSET_TRANSFER_FAILED":
      return "The page could not reach Core's loopback asset server: read Core's stderr below."
    case "APPROVAL_TIMEOUT":
    case "APPROVAL_REJECTED":
      return "The approval window was not approved: check apps/extension's approval.html (#approve)."
    default:
      return "Run the E2E suite (npm run test:e2e) for the failing hop's own tests."
  }
}

const print = (line: string) => process.stdout.write(`${line}\n`)

export const runSelfTest = async (): Promise<boolean> => {
  print("Pedelec self-test: page → SDK → extension → native host → Core → scripted agent → pedelec-cli → page")
  let chain: Chain | undefined
  try {
    chain = await startChain({ routes: await testPageRoutes(), https: false })
    const page = await chain.openPage(chain.origins.http)
    for (const hop of HOPS) {
      const outcome = await hop.run(chain, page).catch(
        (error: unknown): HopOutcome => ({
          failure: {
            code: "SELF_TEST_ERROR",
            message: error instanceof Error ? error.message : String(error),
            details: undefined
          }
        })
      )
      if ("failure" in outcome) {
        const { code, message, details } = outcome.failure
        print(`  ✗ ${hop.name}: ${code}: ${message}${details === undefined ? "" : ` ${JSON.stringify(details)}`}`)
        print(`\nWhat to do: ${advice(code)}`)
        print(`\nnative host log:\n${await chain.hostLog()}\npedelec-core stderr:\n${chain.core?.stderr() ?? ""}`)
        return false
      }
      print(`  ✓ ${hop.name.padEnd(34)} ${outcome.ms.toFixed(1).padStart(8)} ms  ${outcome.detail}`)
    }
    print("\nSelf-test passed: every hop of the chain answered.")
    return true
  } catch (error) {
    print(`  ✗ the chain did not start: ${error instanceof Error ? error.message : String(error)}`)
    print("\nWhat to do: build everything (npm start builds first), and install Chromium (apt-get install chromium).")
    return false
  } finally {
    await chain?.close()
  }
}
