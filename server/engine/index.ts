/**
 * The engine's public API: transport-free turns, the event ledger and its vocabulary.
 * Imports nothing of server/gradio or Fastify.
 * @module
 */
export { createEngine, type Engine, type EngineOptions, type SubmitOptions, type TurnHandle } from './engine.ts';
export type { QueueSettings } from './turn-queue.ts';
export type { ModelTitleOutcome } from './first-title.ts';
export { EVENT_KINDS, PAYLOADS, LedgerPayloadError, validateDraft, isCommitted, branchOf, activeBranchEvents } from './events.ts';
export type { EventDraft, EventKind, LedgerEvent, LiveEvent, PartialEvent, Payload, RunStatus } from './events.ts';
export type { Ledger, LedgerPage, CommitListener } from './ledger.ts';
export { ANY_CONVERSATION } from './ledger.ts';
export { MemoryLedger } from './memory-ledger.ts';
export { PgLedger } from './pg-ledger.ts';
export { followLedger, type FollowOptions } from './follow.ts';
export { TurnHub } from './turn-hub.ts';
export { recoverOrphanedRuns, PROCESS_EXIT_DETAIL } from './recovery.ts';
export { ProcessLiveness } from './liveness.ts';
export { TurnAbort, errorFields, toTurnError } from './turn-errors.ts';
export type { DecisionOrigin, FileRef, FileStorage, TurnAction, TurnInput, TurnSetup, TurnUser } from './types.ts';
