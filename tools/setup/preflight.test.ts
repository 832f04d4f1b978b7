// Preflight's test: runs the real preflight.sh with a PATH of our own (a temp dir holding only the stubs a case
// plants), so "missing", "present" and "installed" are decided by the case and not by this machine. It does not
// install anything: the apt-get it may reach is a stub that plants the commands it was asked for.

import { spawnSync } from "node:child_process"
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeEach, describe, expect, it } from "vitest"

const PREFLIGHT = fileURLToPath(new URL("./preflight.sh", import.meta.url))
const BASH = "/bin/bash"
// A guard, not a measurement: a preflight that reached for a real apt-get or a network would take far longer, and
// the brief is that a fresh machine hears what to do in the first seconds.
const FAST_MS = 3000

const scratch = await mkdtemp(path.join(os.tmpdir(), "pedelec-preflight-"))
afterAll(() => rm(scratch, { recursive: true, force: true }))

let bin = ""
let caseNumber = 0
beforeEach(async () => {
  caseNumber += 1
  bin = path.join(scratch, `bin-${caseNumber}`)
  await mkdir(bin)
})

const plant = async (name: string, body = "exit 0") => {
  const file = path.join(bin, name)
  await writeFile(file, `#!${BASH}\n${body}\n`)
  await chmod(file, 0o755)
  return file
}

const preflight = (env: Readonly<Record<string, string>>) => {
  const result = spawnSync(BASH, [PREFLIGHT], { env: { PATH: bin, ...env }, encoding: "utf8", timeout: FAST_MS })
  return { status: result.status, signal: result.signal, output: `${result.stdout}${result.stderr}` }
}

describe("preflight", () => {
  it("stops at once with the install command when tools are missing and it may not install", () => {
    const run = preflight({ PEDELEC_PREFLIGHT_NO_INSTALL: "1" })
    expect(run.signal).toBeNull()
    expect(run.status).toBe(1)
    expect(run.output).toMatch(/sudo apt-get install -y (chromium )?openssl bubblewrap\n/)
    expect(run.output).toContain("PEDELEC_PREFLIGHT_NO_INSTALL=1")
    expect(run.output).toContain("CHROMIUM=/path/to/chromium")
  })

  it("says why it cannot install when there is no apt-get", () => {
    const run = preflight({})
    expect(run.status).toBe(1)
    expect(run.output).toContain("there is no apt-get here")
    expect(run.output).toMatch(/sudo apt-get install -y .*bubblewrap/)
  })

  it("refuses a CHROMIUM that points nowhere, without installing Debian's", async () => {
    await plant("openssl")
    await plant("bwrap")
    const run = preflight({ CHROMIUM: path.join(bin, "no-such-chromium") })
    expect(run.status).toBe(1)
    expect(run.output).toContain("is not an executable file")
    expect(run.output).toContain("unset it to use /usr/bin/chromium")
  })

  it("passes quietly when everything is present", async () => {
    const chromium = await plant("chromium")
    await plant("openssl")
    await plant("bwrap")
    const run = preflight({ CHROMIUM: chromium, PEDELEC_PREFLIGHT_NO_INSTALL: "1" })
    expect(run.signal).toBeNull()
    expect(run.status).toBe(0)
    expect(run.output).toBe("")
  })

  it("installs only what is missing through apt-get (as root, or with passwordless sudo)", async () => {
    const chromium = await plant("chromium")
    const log = path.join(bin, "apt-get.log")
    // apt-get plants each package's command, as the real one would install it; sudo -n runs what follows it.
    await plant(
      "apt-get",
      `echo "$*" >>${log}\nfor p in "$@"; do case $p in openssl) c=openssl;; bubblewrap) c=bwrap;; *) continue;; esac
printf '#!${BASH}\\nexit 0\\n' >${bin}/$c; /bin/chmod +x ${bin}/$c; done`
    )
    await plant("sudo", `[[ $1 == -n ]] && shift; "$@"`)
    await symlink("/usr/bin/env", path.join(bin, "env"))
    const run = preflight({ CHROMIUM: chromium })
    expect(run.output).toContain("installed; all system packages present")
    expect(run.status).toBe(0)
    const calls = (await readFile(log, "utf8")).trim().split("\n")
    expect(calls).toEqual(["update -qq", "install -y -qq --no-install-recommends openssl bubblewrap"])
  })
})
