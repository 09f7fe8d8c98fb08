/** The offline OpenAI-compatible model: the HTTP plugin and its pure parts. @module */
export { offlineModelRoutes, createOfflineModelRoutes, type OfflineModelOptions } from './routes.ts';
export { respond, type Decision, type ChatMessageIn, type OfferedTool } from './respond.ts';
export { parseIntent, type Intent } from './intents.ts';
export { hashEmbed, cosine, EMBEDDING_DIMENSIONS } from './embeddings.ts';
