// The tests run the real agent bundle; rebuild it first when its sources changed (nx also runs `build` before `test`).
import { buildScriptedAgent, isStale } from "../scripts/build-scripted-agent.ts"

export default async function setup(): Promise<void> {
  if (isStale()) await buildScriptedAgent()
}
