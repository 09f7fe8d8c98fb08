/**
 * Attachments the assistant can read: classify, extract (cached by content hash), budget and frame
 * a message's files as content parts for the model. Knows nothing of Gradio, the agent or the
 * upload storage: the caller passes `readFile`.
 * @module
 */
export { prepareAttachments, type AttachmentDeps } from './prepare.ts';
export { createPgExtractCache, contentHash, type ExtractCache } from './cache.ts';
export { classifyFile } from './classify.ts';
export { allocateBudget, cutToBudget } from './budget.ts';
export { createPdfReader, type PdfReader } from './pdf-reader.ts';
export { PDF_LIMIT_DEFAULTS, type PdfLimits } from './pdf-limits.ts';
export { ATTACHMENT_OPEN } from './notes.ts';
export type * from './types.ts';
