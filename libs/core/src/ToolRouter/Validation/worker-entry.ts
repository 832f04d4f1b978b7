/**
 * The validation worker's entry: answers each check request from Core (ArgsValidator/Worker's handler). Never
 * imported by Core: scripts/bundle-args-worker.ts bundles it, with Effect Schema and re2js, into dist/args-worker.cjs,
 * which Core runs as an eval'd worker, so the same code runs from source (tests) and from pedelec-core's bundle.
 */
import { parentPort } from "node:worker_threads"
import { type CheckRequest, makeChecker } from "@pedelec/contracts/node/ArgsValidator/Worker"

const check = makeChecker()
parentPort?.on("message", (request: CheckRequest) => parentPort?.postMessage(check(request)))
