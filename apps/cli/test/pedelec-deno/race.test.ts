// The check and the run see the same files: a module changed between pedelec-deno's check of the workspace and its
// copy cannot smuggle an import in (the copy is checked again), a module swapped for a symlink leading out is not
// copied, and a change after the copy's check does not reach the run (the copy runs, not the workspace).
import { readFile, rm, symlink, writeFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Wall } from "../../src/pedelec-deno/Sandbox.ts"
import { bwrapWall, type Place, place, ran, refusedWith, runScript } from "./scripts.ts"

let at: Place
let wall: Wall

const HARMLESS = 'export const value = "checked"\n'

beforeAll(async () => {
  at = await place()
  wall = (await bwrapWall()) ?? { kind: "none" }
  await at.file("main.ts", 'import { value } from "./lib/value.ts"\nconsole.log(value)\n')
})
afterAll(() => at.remove())

/** A fresh lib/value.ts (a test may have left a symlink there: replaced, never written through). */
const reset = async () => {
  await rm(path.join(at.workspace, "lib", "value.ts"), { force: true })
  await at.file("lib/value.ts", HARMLESS)
}

describe.each([
  ["the first wall alone", { kind: "none" } as Wall],
  ["the best wall here", undefined]
])("a file changed between the check and the run, behind %s", (_name, forced) => {
  const walled = () => forced ?? wall

  it("cannot smuggle a static import of /etc/hostname in", async () => {
    await reset()
    const outcome = await runScript(at, "main.ts", {
      wall: walled(),
      hooks: {
        afterCheck: () =>
          writeFile(
            path.join(at.workspace, "lib", "value.ts"),
            'import host from "/etc/hostname" with { type: "text" }\nexport const value = host\n'
          )
      }
    })
    const failure = refusedWith(outcome)
    expect(failure.error.code).toBe("SCRIPT_IMPORT_DENIED")
    expect(failure.error.details?.specifier).toBe("file:///etc/hostname")
  })

  it("cannot smuggle in a workspace module that was not checked", async () => {
    await reset()
    await at.file("lib/other.ts", 'export const value = "unchecked"\n')
    const outcome = await runScript(at, "main.ts", {
      wall: walled(),
      hooks: {
        afterCheck: () => writeFile(path.join(at.workspace, "lib", "value.ts"), 'export { value } from "./other.ts"\n')
      }
    })
    const failure = refusedWith(outcome)
    expect(failure.error.code).toBe("SCRIPT_IMPORT_DENIED")
    expect(failure.error.details?.specifier).toBe(path.join("lib", "other.ts"))
    expect(failure.error.message).toContain("a file changed while it checked the script")
  })

  it("cannot swap a checked module for a symlink to a file outside", async () => {
    await reset()
    const outcome = await runScript(at, "main.ts", {
      wall: walled(),
      hooks: {
        afterCheck: async () => {
          const module = path.join(at.workspace, "lib", "value.ts")
          await rm(module)
          await symlink(path.join(at.outside, "secret.txt"), module)
        }
      }
    })
    const failure = refusedWith(outcome)
    expect(failure.error.code).toBe("SCRIPT_IMPORT_DENIED")
    expect(failure.error.details?.reason).toBe("is a symbolic link that leads outside the workspace")
  })

  it("runs the checked copy, not what the workspace holds after the check", async () => {
    await reset()
    const outcome = ran(
      await runScript(at, "main.ts", {
        wall: walled(),
        hooks: {
          afterCopy: () =>
            writeFile(
              path.join(at.workspace, "lib", "value.ts"),
              'import host from "/etc/hostname" with { type: "text" }\nexport const value = host\n'
            )
        }
      })
    )
    expect(outcome.exit).toBe(0)
    expect(outcome.stdout).toBe("checked\n")
    expect(await readFile(path.join(at.workspace, "lib", "value.ts"), "utf8")).toContain("/etc/hostname")
  })
})
