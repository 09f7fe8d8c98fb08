/** Conversation event routes (gateway role): pages, SSE with resume and drain, capabilities. */
export { eventRoutes, type EventRoutesOptions } from './routes.ts';
export { capabilities } from './capabilities.ts';

