// pedelec-agent's Ollama client against the scripted model server over real HTTP (and two raw servers for what the
// script cannot do: silence, and arguments sent as a JSON string): deltas as they stream, tool calls, the context
// window, and every way a server can refuse, each mapped to the code a user can act on.
import http from "node:http"
import type { AddressInfo } from "node:net"
import { type ModelServer, startModelServer } from "@pedelec/test-kit/model-server/ModelServer"
import { CONTEXT_LENGTH } from "@pedelec/test-kit/model-server/Ollama"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AgentFailure, Cancelled } from "../../src/pedelec-agent/Failure.ts"
import { type Connection, chat, contextLength } from "../../src/pedelec-agent/Ollama.ts"
import { workspaceTools } from "../../src/pedelec-agent/WorkspaceTools.ts"

let server: ModelServer
beforeAll(async () => {
  server = await startModelServer()
})
afterAll(() => server.close())

const connection = (overrides: Partial<Connection> = {}): Connection => ({
  baseUrl: server.url,
  apiKey: "ollama",
  timeoutMs: 5_000,
  signal: new AbortController().signal,
  ...overrides
})

const ask = (text: string, overrides: Partial<Connection> = {}) => {
  const deltas: Array<string> = []
  const reply = chat(
    connection(overrides),
    {
      model: "scripted-model",
      messages: [{ role: "user", content: text }],
      tools: workspaceTools,
      numCtx: 8_192,
      think: undefined
    },
    (delta) => deltas.push(delta)
  )
  return { reply, deltas }
}

const failure = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (cause: unknown) => cause
  )
  expect(error).toBeInstanceOf(AgentFailure)
  return error as AgentFailure
}

/** A server on 127.0.0.1 answering every request with `handler`. */
const rawServer = async (handler: http.RequestListener) => {
  const raw = http.createServer(handler)
  let connections = 0
  raw.on("connection", () => connections++)
  await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`
  const close = () => {
    raw.closeAllConnections()
    return new Promise<void>((resolve) => raw.close(() => resolve()))
  }
  return { url, connections: () => connections, close }
}

describe("chat", () => {
  it("streams text deltas as they arrive and returns the whole message with its usage", async () => {
    const { reply, deltas } = ask("TEXT[hello from the loop]END")
    const whole = await reply
    expect(whole.content).toBe("hello from the loop")
    expect(deltas.length).toBeGreaterThan(1)
    expect(deltas.join("")).toBe(whole.content)
    expect(whole.toolCalls).toEqual([])
    expect(whole.inputTokens).toBeGreaterThan(0)
    // The request carried the tools and the window.
    const sent = server.requests().at(-1)!.body as { tools: Array<unknown>; options: { num_ctx: number } }
    expect(sent.tools.length).toBe(workspaceTools.length)
    expect(sent.options.num_ctx).toBe(8_192)
  })

  it("returns a tool call with its arguments", async () => {
    const whole = await ask('TOOL[pedelec_read_file]ARGS[{"path":"a.txt"}]END').reply
    expect(whole.toolCalls).toEqual([{ name: "pedelec_read_file", arguments: { path: "a.txt" } }])
  })

  it("accepts arguments sent as a JSON string, as some compatible servers do", async () => {
    const raw = await rawServer((_req, res) => {
      const call = { function: { name: "pedelec_list_files", arguments: '{"path":"src"}' } }
      res.end(
        `${JSON.stringify({ message: { role: "assistant", content: "", tool_calls: [call] }, done: false })}\n` +
          `${JSON.stringify({ message: { role: "assistant", content: "" }, done: true })}\n`
      )
    })
    try {
      const whole = await ask("anything", { baseUrl: raw.url }).reply
      expect(whole.toolCalls).toEqual([{ name: "pedelec_list_files", arguments: { path: "src" } }])
    } finally {
      await raw.close()
    }
  })

  it("keeps one connection for every round: a stream is read to its end after its done line", async () => {
    const raw = await rawServer((_req, res) => {
      res.write(`${JSON.stringify({ message: { content: "one" }, done: true })}\n`)
      // The chunked end after the done line, in a packet of its own as a server may send it.
      setTimeout(() => res.end(), 20)
    })
    try {
      for (let round = 0; round < 3; round++) {
        expect((await ask("x", { baseUrl: raw.url }).reply).content).toBe("one")
        // The next turn's round comes later than the end: a destroyed stream would have taken its connection along.
        await new Promise((resolve) => setTimeout(resolve, 60))
      }
      expect(raw.connections()).toBe(1)
    } finally {
      await raw.close()
    }
  })

  it.each([
    [401, "OLLAMA_AUTH_FAILED"],
    [403, "OLLAMA_AUTH_FAILED"],
    [404, "OLLAMA_MODEL_NOT_FOUND"],
    [429, "OLLAMA_RATE_LIMITED"],
    [400, "PROVIDER_FAILED"],
    [500, "PROVIDER_FAILED"]
  ])("maps HTTP %i to %s, with a message that says what to do", async (status, code) => {
    const error = await failure(ask(`FAIL_HTTP[${status}]END`).reply)
    expect(error.code).toBe(code)
    expect(error.message.length).toBeGreaterThan(20)
    if (code === "OLLAMA_MODEL_NOT_FOUND") expect(error.message).toContain("ollama pull scripted-model")
  })

  it("a stream that is not Ollama's is OLLAMA_RESPONSE_INVALID", async () => {
    const error = await failure(ask("GARBAGE").reply)
    expect(error.code).toBe("OLLAMA_RESPONSE_INVALID")
    expect(error.message).toContain(server.url)
  })

  it("a server that is not there is OLLAMA_UNAVAILABLE, naming the address", async () => {
    const raw = await rawServer(() => undefined)
    await raw.close()
    const error = await failure(ask("TEXT[x]END", { baseUrl: raw.url }).reply)
    expect(error.code).toBe("OLLAMA_UNAVAILABLE")
    expect(error.message).toContain(raw.url)
  })

  it("a server that goes silent is stopped after timeoutMs", async () => {
    const raw = await rawServer((_req, res) => {
      res.write(`${JSON.stringify({ message: { content: "first" }, done: false })}\n`)
    })
    try {
      const started = Date.now()
      const error = await failure(ask("x", { baseUrl: raw.url, timeoutMs: 300 }).reply)
      expect(error.code).toBe("PROVIDER_FAILED")
      expect(error.details.timeoutMs).toBe(300)
      expect(Date.now() - started).toBeLessThan(5_000)
    } finally {
      await raw.close()
    }
  })

  it("a cancelled turn ends as Cancelled, not as a failure", async () => {
    const raw = await rawServer(() => undefined)
    const cancel = new AbortController()
    try {
      const pending = ask("x", { baseUrl: raw.url, signal: cancel.signal }).reply
      setTimeout(() => cancel.abort(), 100)
      await expect(pending).rejects.toBeInstanceOf(Cancelled)
    } finally {
      await raw.close()
    }
  })
})

describe("contextLength", () => {
  it("reads the model's window from /api/show", async () => {
    expect(await contextLength(connection(), "scripted-model")).toBe(CONTEXT_LENGTH)
  })

  it("a model the server does not have is OLLAMA_MODEL_NOT_FOUND", async () => {
    const error = await failure(contextLength(connection(), "no-such-model"))
    expect(error.code).toBe("OLLAMA_MODEL_NOT_FOUND")
    expect(error.message).toContain("no-such-model")
  })
})
