/** list_deployments, deploy_service. */
import type { FastifyPluginAsync } from 'fastify';
import { createDeployment, listDeployments } from '../../db/deployments.ts';
import type { ApiContext } from '../context.ts';
import { requestUser } from '../identity.ts';
import { parseInput } from '../../http/validate.ts';
import { readDeployState } from '../../db/effect-state.ts';
import { ifMatch, isDryRun, previewAnswer } from './dry-run.ts';
import { runEffect } from './effects.ts';
import { assertStateUnchanged, deployPreview, deployStateHash } from './preview.ts';
import { assertEnvironmentExists, assertServiceExists } from './lookups.ts';
import { toolRoute } from './route-config.ts';
import { DeployBody, DeploymentsQuery } from './schemas.ts';
import { deploymentJson } from './serialize.ts';

export const deploymentTools: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  app.get('/deployments', toolRoute('list_deployments'), async (request) => {
    const query = parseInput(DeploymentsQuery, request.query, 'query');
    await assertServiceExists(ctx.pool, query.service);
    await assertEnvironmentExists(ctx.pool, query.environment);
    const items = await listDeployments(ctx.pool, query);
    return { count: items.length, items: items.map(deploymentJson) };
  });

  app.post('/deployments', toolRoute('deploy_service'), async (request, reply) => {
    const body = parseInput(DeployBody, request.body, 'body');
    const user = requestUser(request);
    if (isDryRun(request)) return previewAnswer(request, deployPreview(await readDeployState(ctx.pool, body), body.version, new Date()));
    const expected = ifMatch(request);
    return runEffect(ctx, request, reply, { operation: 'deploy_service', args: body, status: 201 }, async (tx) => {
      // Under the service row's lock: no concurrent deploy can slip between this check and the insert.
      if (expected) assertStateUnchanged(expected, deployStateHash(await readDeployState(tx, { ...body, lock: true })));
      return deploymentJson(await createDeployment(tx, { ...body, deployedBy: user.username }));
    });
  });
};
