/**
 * What a person may send with a decision, besides confirm or deny (issue 27): the arguments as
 * they edited them, and a standing grant instead of a one-off confirm. Declared once here: the
 * /chat parameters `arguments` and `grant`, v1's approve body and the UI's card all speak it.
 * Strict: an unknown field in a decision is refused, never ignored. The schemas (and their types,
 * `EditedArguments` and `GrantRequest`) live with the wire's other zod schemas in chat-metadata.ts
 * (the UI imports zod nowhere else), which imports this file's limit; nothing here imports back.
 * @module
 */
/** The longest grant anyone may ask for (8 h); a policy rule's `max_grant_s` caps it further. */
export const MAX_GRANT_TTL_S = 8 * 3600;

