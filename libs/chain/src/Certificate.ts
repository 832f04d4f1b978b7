/**
 * Certificate — a throwaway self-signed certificate for the https origin, made at run time with the `openssl` CLI
 * into a temp directory (never committed). Chromium is started with `--ignore-certificate-errors`, so only the name
 * matters: `pedelec-e2e.test`, mapped to 127.0.0.1 by `--host-resolver-rules`.
 */
import { execFile } from "node:child_process"
import { readFile } from "node:fs/promises"
import path from "node:path"
import { promisify } from "node:util"

export const HTTPS_HOST = "pedelec-e2e.test"

export interface Certificate {
  readonly cert: Buffer
  readonly key: Buffer
}

export const makeCertificate = async (dir: string): Promise<Certificate> => {
  const keyFile = path.join(dir, "key.pem")
  const certFile = path.join(dir, "cert.pem")
  try {
    await promisify(execFile)("openssl", [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "2",
      "-subj",
      `/CN=${HTTPS_HOST}`,
      "-addext",
      `subjectAltName=DNS:${HTTPS_HOST}`,
      "-keyout",
      keyFile,
      "-out",
      certFile
    ])
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new Error(`could not make the test certificate with openssl (apt-get install openssl): ${reason}`)
  }
  return { cert: await readFile(certFile), key: await readFile(keyFile) }
}
