/**
 * TurnProcess with a shell stand-in that prints its completion and then takes its time to exit (codex does, for
 * ~0.8 s): the turn's stream ends at the completion while the CLI still runs, the CLI is listed until it is gone,
 * and one that does not exit within exitWaitMs is killed; closing the session kills a lingering one at once.
 */
import { writeFileSync } from "node:fs"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { AgentProcess } from "../src/AgentProcess.ts"
import type { OutputLine } from "../src/OutputLines.ts"
import { CountingDecoder, makeTurnProcess } from "../src/TurnProcess.ts"
import { pidExists, tempDir, waitGone } from "./support.ts"

/** Each line is a ProviderEvent as JSON. */
class JsonDecoder extends CountingDecoder {
  decode(line: OutputLine): ReadonlyArray<ProviderEvent> {
    return line._tag === "Text" && line.text !== "" ? [JSON.parse(line.text) as ProviderEvent] : []
  }
}

/** Prints its pid as a message, then the completion, then lingers for $LINGER seconds. */
const STAND_IN = `#!/bin/sh
echo "{\\"type\\":\\"message\\",\\"text\\":\\"$$\\"}"
echo '{"type":"completed"}'
sleep "$LINGER"
`

const turnProcess = (linger: string, exitWaitMs: number, standIn = STAND_IN) =>
  Effect.gen(function* () {
    const dir = yield* tempDir("turn-process")
    const script = path.join(dir, "cli.sh")
    writeFileSync(script, standIn, { mode: 0o755 })
    return yield* makeTurnProcess({
      provider: "scripted",
      label: "stand-in",
      spawn: () => ({ command: script, args: [], cwd: dir, env: { LINGER: linger }, inheritEnv: true, stdin: "" }),
      decoder: () => new JsonDecoder(),
      exitWaitMs,
      cleanExitCompletes: false
    })
  })

const turn = { prompt: "go", providerSessionId: undefined, kind: "user" } as const

const pidIn = (events: ReadonlyArray<ProviderEvent>) => {
  const message = events.find((event) => event.type === "message")
  return Number(message?.type === "message" ? message.text : Number.NaN)
}

/** A burst in one write (blank lines between, a delta after the completion), after a write with nothing to say. */
const BURST = `#!/bin/sh
printf '\\n\\n'
sleep 0.1
printf '{"type":"delta","text":"a"}\\n\\n{"type":"delta","text":"b"}\\n{"type":"delta","text":"c"}\\n\\n{"type":"completed"}\\n{"type":"delta","text":"late"}\\n'
`

describe("TurnProcess", () => {
  it.live("a read's lines become its events in order; a read of none emits nothing; nothing after the completion", () =>
    Effect.gen(function* () {
      const sp = yield* turnProcess("0", 10_000, BURST)
      const events = [...(yield* Stream.runCollect(sp.send(turn)))]
      assert.deepStrictEqual(events, [
        { type: "delta", text: "a" },
        { type: "delta", text: "b" },
        { type: "delta", text: "c" },
        { type: "completed" }
      ])
    }).pipe(Effect.scoped, Effect.provide(AgentProcess.layer))
  )

  it.live("the turn ends at its completion; the CLI exits on its own afterwards and is listed until then", () =>
    Effect.gen(function* () {
      const sp = yield* turnProcess("1", 10_000)
      const events = [...(yield* Stream.runCollect(sp.send(turn)))]
      assert.deepStrictEqual(events.at(-1), { type: "completed" })
      const pid = pidIn(events)
      assert.isTrue(pidExists(pid), "still winding down when the turn is over")
      assert.isTrue((yield* sp.processes).some((record) => record.pid === pid))
      yield* waitGone(pid, 5_000)
    }).pipe(Effect.scoped, Effect.provide(AgentProcess.layer))
  )

  it.live("a CLI that lingers past exitWaitMs is killed; closing the session kills one at once", () =>
    Effect.gen(function* () {
      const sp = yield* turnProcess("60", 200)
      const lingering = pidIn([...(yield* Stream.runCollect(sp.send(turn)))])
      yield* waitGone(lingering, 5_000)
      const scope = yield* Scope.make()
      const other = yield* turnProcess("60", 60_000).pipe(Scope.provide(scope))
      const pid = pidIn([...(yield* Stream.runCollect(other.send(turn)))])
      assert.isTrue(pidExists(pid))
      yield* Scope.close(scope, Exit.void)
      yield* waitGone(pid, 5_000)
    }).pipe(Effect.scoped, Effect.provide(AgentProcess.layer))
  )
})
