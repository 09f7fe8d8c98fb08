/** search_dashboards, get_dashboard. */
import type { FastifyPluginAsync } from 'fastify';
import { getDashboard, searchDashboards } from '../../db/dashboards.ts';
import { AirlockError } from '../../errors.ts';
import type { ApiContext } from '../context.ts';
import { parseInput } from '../../http/validate.ts';
import { toolRoute } from './route-config.ts';
import { DashboardParams, DashboardSearchQuery } from './schemas.ts';
import { dashboardJson } from './serialize.ts';

export const dashboardTools: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  app.get('/dashboards', toolRoute('search_dashboards'), async (request) => {
    const query = parseInput(DashboardSearchQuery, request.query, 'query');
    const found = await searchDashboards(ctx.pool, { query: query.q, limit: query.limit });
    return {
      query: query.q ?? null,
      count: found.length,
      items: found.map((d) => ({ ...dashboardJson(d), score: Number(d.score.toFixed(4)) })),
    };
  });

  app.get('/dashboards/:id', toolRoute('get_dashboard'), async (request) => {
    const { id } = parseInput(DashboardParams, request.params, 'params');
    const dashboard = await getDashboard(ctx.pool, id);
    if (!dashboard) throw new AirlockError('NOT_FOUND', `No dashboard "${id}".`, { details: { dashboard: id } });
    return { ...dashboardJson(dashboard), panels: dashboard.panels };
  });
};
