/** The OpenAI-compatible face (gateway role): `/api/agent/openai/v1`, a transport over v1's runs. */
export { openAiRoutes, OPENAI_PREFIX, type OpenAiRoutesOptions } from './routes.ts';
