/** Conversation event routes (gateway role): pages, SSE with resume and drain, capabilities. */
export { eventRoutes, type EventRoutesOptions } from './routes.ts';
export { capabilities } from './capabilities.ts';
export { sseFrame, sseComment, resumeCursor } from './sse-format.ts';
export { bearerUser, type VerifyUser } from './auth.ts';
export { openSseResponse, writeNow } from './sse-response.ts';
