/**
 * Codes — whether something a link answered is a coded failure in the contracts' sense: its code is one of
 * `ERROR_CODES` (libs/contracts/src/ErrorCode.ts), the only list of codes. The fault suite's fuzzers use it on every
 * answer; a code invented elsewhere, or none at all, is what they exist to catch.
 */
import { ERROR_CODES, type ErrorCode } from "@pedelec/contracts/ErrorCode"

const CODES: ReadonlySet<string> = new Set(ERROR_CODES)

export const isContractsCode = (code: string): code is ErrorCode => CODES.has(code)
