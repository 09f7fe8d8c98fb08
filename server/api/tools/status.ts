/** check_health, get_environment. */
import type { FastifyPluginAsync } from 'fastify';
import { getEnvironment, listEnvironments, listRunningVersions } from '../../db/environments.ts';
import { getService, listServices } from '../../db/services.ts';
import { AirlockError } from '../../errors.ts';
import type { ApiContext } from '../context.ts';
import { parseInput } from '../../http/validate.ts';
import { toolRoute } from './route-config.ts';
import { EnvironmentQuery, HealthQuery } from './schemas.ts';
import { environmentJson, healthJson } from './serialize.ts';

export const statusTools: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  app.get('/health', toolRoute('check_health'), async (request) => {
    const query = parseInput(HealthQuery, request.query, 'query');
    const now = new Date();
    if (query.service) {
      const service = await getService(ctx.pool, query.service);
      if (!service) throw new AirlockError('NOT_FOUND', `Unknown service "${query.service}".`, { details: { service: query.service } });
      return healthJson(service, now);
    }
    const services = await listServices(ctx.pool);
    const count = (status: string) => services.filter((s) => s.status === status).length;
    return {
      summary: {
        total: services.length,
        healthy: count('healthy'),
        degraded: count('degraded'),
        down: count('down'),
        in_maintenance: services.filter((s) => s.inMaintenance).length,
      },
      items: services.map((s) => healthJson(s, now)),
      checked_at: now,
    };
  });

  app.get('/environment', toolRoute('get_environment'), async (request) => {
    const query = parseInput(EnvironmentQuery, request.query, 'query');
    if (query.environment) {
      const environment = await getEnvironment(ctx.pool, query.environment);
      if (!environment) {
        throw new AirlockError('NOT_FOUND', `Unknown environment "${query.environment}".`, { details: { environment: query.environment } });
      }
      return environmentJson(environment, await listRunningVersions(ctx.pool, environment.name));
    }
    const [environments, versions] = await Promise.all([listEnvironments(ctx.pool), listRunningVersions(ctx.pool)]);
    return { items: environments.map((e) => environmentJson(e, versions)) };
  });
};
