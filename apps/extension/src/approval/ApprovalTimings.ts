/** The approval rules' clock (SPEC §4), shared by the worker (Approvals) and the approval window's script. */
export const APPROVAL_TIMEOUT_MS = 60_000
export const REJECTION_MEMORY_MS = 10 * 60_000
/** The approval window enables Approve after this long; the worker ignores an earlier Approve (click-jacking). */
export const APPROVE_DELAY_MS = 1_000
