/** The AG-UI protocol endpoint (gateway role): `POST /api/agent/ag-ui`, an adapter over the engine. */
export { agUiRoutes, AG_UI_PATH, type AgUiRoutesOptions } from './routes.ts';
