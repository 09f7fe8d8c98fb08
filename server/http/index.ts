/**
 * HTTP helpers every transport shares (v1, AG-UI, the event stream, the api role): input
 * validation with taxonomy errors, SSE framing and writing, the bearer user of a request.
 * @module
 */
export { parseInput } from './validate.ts';
export { sseFrame, sseComment, resumeCursor } from './sse-format.ts';
export { openSseResponse, writeNow } from './sse-response.ts';
export { bearerUser, ownConversation, type VerifyUser } from './bearer-user.ts';
export { createUserAdmission, retryAfterOf, ADMISSION_RETRY_AFTER_S, type UserAdmission } from './user-admission.ts';
