/**
 * The wire module: what the server and the UI both speak, declared once. The /chat metadata
 * (types here; its zod schemas in chat-metadata.ts, which the UI never imports at run time), the
 * stored transcript, the ledger -> /chat projection and the error code table. It imports neither
 * server code nor Svelte (tests/unit/server/architecture.test.ts): the server imports it.
 * @module
 */
export type { ApprovalReason, ArgumentLabels, ArgumentsEdit, ChatMessage, EditedArguments, EffectPreview, GrantOffer, GrantRequest, Replaces, ChatMetadata, FileRef, PolicyStamp, WireMessage, WireMetadata } from './chat-metadata.ts';
export { MAX_GRANT_TTL_S } from './decision.ts';
export { ERROR_CODES, errorFieldsOf, isErrorCode, toErrorCode, type ErrorCode, type ErrorField } from './errors.ts';
export { ChatProjection, chatMessage, type ProjectedEvent } from './projection.ts';
export { HIT_END, HIT_START, snippetParts, type SnippetPart } from './search-snippet.ts';
export type { HistoryPage, StoredAnswerMetadata, StoredApprovalMetadata, StoredBranch, StoredMessage, StoredToolMetadata, StoredUserMetadata } from './stored.ts';
