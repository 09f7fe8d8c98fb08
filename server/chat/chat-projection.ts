/**
 * Engine events -> /chat wire messages: the one projection of the wire module (src/lib/wire),
 * which the UI uses for the runs it follows. The engine's LiveEvent is one of its inputs (the
 * handler passes it; tsc checks the shapes agree).
 * @module
 */
export { ChatProjection } from '../../src/lib/wire/index.ts';
