/**
 * The error taxonomy: one table of codes for the REST API, the Gradio stream, the ledger and the
 * UI. The server's `AirlockError` (server/errors.ts) takes its status, retryability and default
 * message from here; the UI its sentence for people. Pure data: imports nothing.
 * @module
 */

/**
 * Every error code a client may see: its HTTP status, whether retrying can help, the server's
 * default message (REST bodies, stream errors without a detail of their own) and `userText`, the
 * sentence the UI shows its user.
 */
export const ERROR_CODES = {
  UNAUTHORIZED: {
    status: 401, retryable: false, message: 'Authentication is required or has expired.',
    userText: 'Your session has ended. Sign in again to continue.',
  },
  FORBIDDEN: { status: 403, retryable: false, message: 'You are not allowed to do this.', userText: 'Your role does not allow this action.' },
  LLM_UNAVAILABLE: {
    status: 503, retryable: true, message: 'The language model is unavailable. Try again shortly.',
    userText: 'The language model is unavailable right now. Try again in a moment.',
  },
  GRADIO_UNREACHABLE: {
    status: 503, retryable: true, message: 'The assistant gateway cannot be reached.',
    userText: 'The assistant cannot be reached. Check your connection and try again.',
  },
  TOOL_FAILURE: { status: 502, retryable: true, message: 'A tool failed to run.', userText: 'A tool failed to run.' },
  CONVERSATION_BUSY: {
    status: 409, retryable: true, message: 'This conversation is busy in another tab or window.',
    userText: 'This conversation is busy in another tab or window.',
  },
  APPROVAL_EXPIRED: {
    status: 410, retryable: false, message: 'The approval has expired.',
    userText: 'The approval expired before it was answered. Nothing was run.',
  },
  APPROVAL_NOT_FOUND: {
    status: 404, retryable: false, message: 'There is no pending approval for this conversation.',
    userText: 'There is no pending approval to answer any more.',
  },
  VALIDATION_ERROR: { status: 400, retryable: false, message: 'The request is not valid.', userText: 'The request was not valid.' },
  NOT_FOUND: { status: 404, retryable: false, message: 'Not found.', userText: 'Not found. It may have been deleted.' },
  CONFLICT: {
    status: 409, retryable: false, message: 'The request conflicts with the current state.',
    userText: 'That conflicts with the current state.',
  },
  PAYLOAD_TOO_LARGE: { status: 413, retryable: false, message: 'The request body is too large.', userText: 'That file or message is too large.' },
  RATE_LIMITED: {
    status: 429, retryable: true, message: 'Too many attempts. Wait a moment and try again.',
    userText: 'Too many attempts. Wait a moment and try again.',
  },
  INTERNAL: { status: 500, retryable: true, message: 'Something went wrong on our side.', userText: 'Something went wrong on our side.' },
  // Infrastructure (the database) is down or overloaded: the request may be fine and the session
  // valid, so clients keep their session and retry; never reported as UNAUTHORIZED.
  SERVICE_UNAVAILABLE: {
    status: 503, retryable: true, message: 'The service is temporarily unavailable. Try again shortly.',
    userText: 'The service is temporarily unavailable. You are still signed in; try again in a moment.',
  },
  // The upload folder's disk is full: nothing of the upload was kept, and retrying later can work.
  STORAGE_FULL: {
    status: 507, retryable: true, message: 'The server has no room to store this upload right now. Try again later.',
    userText: 'The server has no room for this file right now. Nothing was kept; try again later.',
  },
  // An approved action's state changed since its preview (issue 27): nothing ran; a new approval asks again.
  PRECONDITION_FAILED: {
    status: 412, retryable: false, message: 'The state changed since it was previewed; nothing was done.',
    userText: 'What was approved changed before it ran. Nothing was done; a new approval asks again.',
  },
  // The policy rule asks the approver to sign with a passkey (issue 28 step-up), and no valid
  // signature came: over /chat, AG-UI, MCP or v1 without one, or one not accepted.
  STEP_UP_REQUIRED: {
    status: 403, retryable: false, message: 'This approval needs the approver\'s passkey signature.',
    userText: 'This approval needs your passkey. Confirm it from the card or the approvals inbox; add a passkey in Settings (/settings) first if you have none.',
  },
} as const satisfies Record<string, { status: number; retryable: boolean; message: string; userText: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}

/** A code from the taxonomy, or INTERNAL for anything else (an unknown or missing code). */
export function toErrorCode(value: unknown): ErrorCode {
  return isErrorCode(value) ? value : 'INTERNAL';
}

/** One argument an error is about: its path (`version`, `flags.canary`; '' for the arguments as a whole) and what is wrong. */
export interface ErrorField {
  path: string;
  message: string;
}

/**
 * The well-formed `{path, message}` entries of `value` (a VALIDATION_ERROR's `details.fields`, or
 * the `fields` a message or event carries), each with just those two keys; [] for anything else.
 */
export function errorFieldsOf(value: unknown): ErrorField[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((f) => (typeof f?.path === 'string' && typeof f?.message === 'string' ? [{ path: f.path, message: f.message }] : []));
}
