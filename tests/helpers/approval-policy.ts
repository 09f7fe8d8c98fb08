/**
 * The policy file issue 26's tests run under: a production deploy needs two admins other than the
 * requester, any other deploy one approval, and a maintenance window is routed to admins (and
 * escalated after 2 s when nobody answered); a task is admin2's to approve until it escalates to
 * every admin (after 10 minutes: the escalation test moves its clock).
 */
export const TWO_ADMIN_POLICY = `tool_rules:
  deploy_service:
    - action: require_approval
      when: {environment: production}
      approvals: {count: 2, roles: [admin], distinct_from_requester: true}
    - require_approval
  start_maintenance:
    action: require_approval
    approvals: {count: 1, roles: [admin]}
    escalate: {after_s: 2, roles: [admin]}
  create_task:
    action: require_approval
    approvals: {count: 1, users: [admin2]}
    escalate: {after_s: 600, roles: [admin]}
`;

/**
 * The policy file issue 27's edit tests run under (integration and e2e): a production deploy needs
 * two admins other than the requester, a deploy to `forbidden` is denied, a maintenance of db-primary
 * needs an admin; any other deploy or maintenance one approval. An edit can move a call between them.
 */
export const EDIT_POLICY = `tool_rules:
  deploy_service:
    - action: require_approval
      when: {environment: production}
      approvals: {count: 2, roles: [admin], distinct_from_requester: true}
    - action: deny
      when: {environment: forbidden}
    - require_approval
  start_maintenance:
    - action: require_approval
      when: {service: db-primary}
      approvals: {count: 1, roles: [admin]}
    - require_approval
`;
