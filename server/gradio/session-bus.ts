/**
 * The session bus: its contract and the in-memory implementation (bus/). Kept as the import path
 * the rest of the plugin uses.
 * @module
 */
export type { Attachment, BusMessage, CancelOutcome, LocalCancel, SessionBus, SessionSink } from './bus/types.ts';
export { createMemorySessionBus } from './bus/memory-bus.ts';
