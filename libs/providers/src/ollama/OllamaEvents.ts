/**
 * OllamaEvents — decoding pedelec-agent's stdout: it prints the contracts' ProviderEvent lines itself, so each line
 * is decoded with that schema, strictly. A line of an unknown type is ignored and counted; anything else unreadable
 * is skipped and counted. The agent's own `error` event is the turn's failure, already carrying its contract code.
 */
import { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { jsonOf } from "../EventLine.ts"
import type { OutputLine } from "../OutputLines.ts"
import { CountingDecoder } from "../TurnProcess.ts"

const KNOWN_TYPES = new Set(["session", "delta", "message", "tool_activity", "usage", "completed", "error"])
const decodeEnvelope = Schema.decodeUnknownOption(Schema.Struct({ type: Schema.String }))
const decodeEvent = Schema.decodeUnknownOption(ProviderEvent)

export class AgentLoopDecoder extends CountingDecoder {
  decode(line: OutputLine): ReadonlyArray<ProviderEvent> {
    if (line._tag === "Invalid") return this.skip()
    if (line.text.trim() === "") return []
    const json = jsonOf(line.text)
    const envelope = Option.flatMap(json, decodeEnvelope)
    if (Option.isNone(json) || Option.isNone(envelope)) return this.skip()
    if (!KNOWN_TYPES.has(envelope.value.type)) {
      this.counts.ignored++
      return []
    }
    return this.mapped(decodeEvent(json.value), (event) => [event])
  }
}
