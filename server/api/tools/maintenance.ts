/** list_maintenance_events, start_maintenance, end_maintenance. */
import type { FastifyPluginAsync } from 'fastify';
import { endMaintenance, listMaintenance, startMaintenance } from '../../db/maintenance.ts';
import type { ApiContext } from '../context.ts';
import { requestUser } from '../identity.ts';
import { parseInput } from '../../http/validate.ts';
import { readMaintenanceState } from '../../db/effect-state.ts';
import { ifMatch, isDryRun, previewAnswer } from './dry-run.ts';
import { runEffect } from './effects.ts';
import { assertStateUnchanged, maintenancePreview, maintenanceStateHash } from './preview.ts';
import { assertServiceExists } from './lookups.ts';
import { toolRoute } from './route-config.ts';
import { EndMaintenanceBody, MaintenanceQuery, StartMaintenanceBody } from './schemas.ts';
import { maintenanceJson } from './serialize.ts';

export const maintenanceTools: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  app.get('/maintenance', toolRoute('list_maintenance_events'), async (request) => {
    const query = parseInput(MaintenanceQuery, request.query, 'query');
    await assertServiceExists(ctx.pool, query.service);
    const events = await listMaintenance(ctx.pool, { status: query.status, service: query.service });
    return { status: query.status, count: events.length, items: events.map(maintenanceJson) };
  });

  app.post('/maintenance', toolRoute('start_maintenance'), async (request, reply) => {
    const body = parseInput(StartMaintenanceBody, request.body, 'body');
    const user = requestUser(request);
    if (isDryRun(request)) return previewAnswer(request, maintenancePreview(await readMaintenanceState(ctx.pool, body), body.duration_minutes, new Date()));
    const expected = ifMatch(request);
    return runEffect(ctx, request, reply, { operation: 'start_maintenance', args: body, status: 201 }, async (tx) => {
      if (expected) assertStateUnchanged(expected, maintenanceStateHash(await readMaintenanceState(tx, { service: body.service, lock: true })));
      return maintenanceJson(
        await startMaintenance(tx, {
          service: body.service,
          durationMinutes: body.duration_minutes,
          reason: body.reason,
          createdBy: user.username,
        }),
      );
    });
  });

  app.post('/maintenance/end', toolRoute('end_maintenance'), async (request, reply) => {
    const body = parseInput(EndMaintenanceBody, request.body, 'body');
    const user = requestUser(request);
    return runEffect(ctx, request, reply, { operation: 'end_maintenance', args: body, status: 200 }, async (tx) =>
      maintenanceJson(await endMaintenance(tx, { service: body.service, endedBy: user.username })),
    );
  });
};
