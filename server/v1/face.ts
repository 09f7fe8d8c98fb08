/**
 * What another face of the headless runs imports from v1 (server/openai, issue 43 item 4): the
 * same callers (identity.ts), the same runs (run-service.ts) followed the same way (run-follow.ts),
 * the same failure reading and error handling. Importing it registers nothing.
 * @module
 */
export type { V1Deps } from './deps.ts';
export { v1Authenticate, v1ResolveUserKey, v1Caller, type V1Caller, type V1IdentityDeps } from './identity.ts';
export { followLiveRun } from './run-follow.ts';
export { runFailure, STREAM_HEARTBEAT_MS } from './completions.ts';
export { runStatus } from './run-status.ts';
export { useErrorBodies } from './errors.ts';
export type { AgentEventV1 } from './agent-events.ts';
export type { RunRequest } from './schemas.ts';
